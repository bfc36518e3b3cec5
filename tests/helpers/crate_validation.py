"""The community's RO-Crate validator (roc-validator, ``rocrate_validator``) run offline, in-process.

The validator resolves a crate's JSON-LD ``@context`` (and any other remote document) through its HTTP
requester, a ``requests_cache`` session. In its offline mode that session answers from its cache only: a
document that is not there is an error (``OfflineCacheMissError``) and nothing reaches the network, not even
rdflib's own fallback. :func:`validate` runs it that way, its cache a fresh file whose only entries are the
documents of :data:`LOCAL_DOCUMENTS`, each read from a file an installed package ships. The profiles (SHACL
shapes and Python checks) are the validator's own files.

The RO-Crate 1.1 context, the one the Workflow Run Crate 0.5 profile builds on, is ro-crate-py's copy
(``rocrate/data/ro-crate.jsonld`` of the pinned ``rocrate==0.15.1``, its ``@id`` that URL). The next release
ships the 1.3 context there instead, which maps ``ComputationalWorkflow`` and ``FormalParameter`` to other IRIs:
served in 1.1's place it would fail the Workflow RO-Crate's REQUIRED type check. :func:`validate` refuses a
file whose ``@id`` is not the URL it is served for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

RO_CRATE_1_1_CONTEXT = "https://w3id.org/ro/crate/1.1/context"


def _rocrate_data(name: str) -> Path:
    import rocrate

    return Path(rocrate.__file__).parent / "data" / name


#: URL → the local file served for it
LOCAL_DOCUMENTS: Mapping[str, Path] = {RO_CRATE_1_1_CONTEXT: _rocrate_data("ro-crate.jsonld")}


def _response(url: str, body: bytes):
    import io

    import requests
    import urllib3

    headers = {"Content-Type": "application/ld+json"}
    response = requests.Response()
    response.raw = urllib3.HTTPResponse(body=io.BytesIO(body), headers=headers, status=200, preload_content=False,
                                        request_url=url)
    response.status_code = 200
    response.reason = "OK"
    response.url = url
    response.headers.update(headers)
    response._content = body
    response.encoding = "utf-8"
    response.request = requests.Request("GET", url).prepare()
    return response


def validate(crate: Path, cache_dir: Path, severity: str = "RECOMMENDED", profile: str | None = None):
    """The validation result of the crate folder or zip ``crate`` at ``severity`` (``REQUIRED``,
    ``RECOMMENDED``, ``OPTIONAL``), against ``profile`` or the profile the crate conforms to (auto-detected)."""
    from rocrate_validator import services
    from rocrate_validator.models import ValidationSettings
    from rocrate_validator.utils.http import HttpRequester

    cache_dir.mkdir(parents=True, exist_ok=True)
    settings = {"rocrate_uri": str(crate), "requirement_severity": severity, "offline": True,
                "cache_path": str(cache_dir / "http_cache"), "verbose": False}
    if profile:
        settings["profile_identifier"] = profile
    else:
        settings["profile_identifier"] = detect_profile(crate)
    parsed = ValidationSettings.parse(settings)  # installs the offline cache and the validator's document loader
    session = HttpRequester().session
    for url, path in LOCAL_DOCUMENTS.items():
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("@id") != url:
            raise ValueError(f"{path} is {document.get('@id')!r}, not the document of {url}: see tests/helpers/crate_validation.py")
        session.cache.save_response(_response(url, path.read_bytes()))
    return services.validate(parsed)


def detect_profile(crate: Path) -> str:
    """The most specific profile the validator finds the crate conforming to (its identifier)."""
    from rocrate_validator import services

    profiles = services.detect_profiles({"rocrate_uri": str(crate), "offline": True, "no_cache": False})
    return profiles[-1].identifier if profiles else "ro-crate-1.1"


def findings(result) -> list[dict[str, str | None]]:
    """Each issue as a plain record: severity, check, message, entity, property."""
    return [{"severity": issue.severity.name, "check": issue.check.identifier, "message": issue.message,
             "entity": issue.violatingEntity, "property": issue.violatingProperty} for issue in result.get_issues()]
