"""The properties of the crate's entities: files, the people and works ``CITATION.cff`` names, the licence,
the software."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.jsontypes import JSONObject
from medfc.rocrate.records import iso_time

if TYPE_CHECKING:
    from rocrate.model.entity import Entity as CrateEntity
    from rocrate.rocrate import ROCrate

SPDX = "https://spdx.org/licenses/"
PYTHON_URL = "https://www.python.org/"
PYPI = "https://pypi.org/project/"
# CITATION.cff's reference types → schema.org
CFF_TYPES = {"article": "ScholarlyArticle", "conference-paper": "ScholarlyArticle", "data": "Dataset", "software": "SoftwareSourceCode",
             "report": "Report", "thesis": "Thesis", "book": "Book"}
# a file's media type by its name's ending (longest first), independent of the machine's mime.types; the rule
# files and the Snakefile are text
MEDIA_TYPES = {
    ".json.gz": "application/gzip", ".jsonl.gz": "application/gzip", ".gz": "application/gzip", ".zip": "application/zip",
    ".json": "application/json", ".jsonl": "application/jsonl", ".yaml": "application/yaml", ".yml": "application/yaml",
    ".cff": "application/yaml", ".csv": "text/csv", ".tsv": "text/tab-separated-values", ".parquet": "application/vnd.apache.parquet",
    ".md": "text/markdown", ".rst": "text/x-rst", ".txt": "text/plain", ".log": "text/plain", ".smk": "text/plain",
    ".py": "text/x-python", ".sh": "text/x-shellscript", ".html": "text/html", ".css": "text/css", ".tex": "application/x-tex",
    ".png": "image/png", ".svg": "image/svg+xml", ".pdf": "application/pdf", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
}
TEXT_NAMES = ("Snakefile", "LICENSE")  # files without an ending that are plain text


def media_type(crate_path: str) -> str:
    """A file's media type by its name (the rule files and ``Snakefile`` as text; unknown: octet-stream)."""
    name = Path(crate_path).name
    if name in TEXT_NAMES:
        return "text/plain"
    lower = name.lower()
    for ending, kind in sorted(MEDIA_TYPES.items(), key=lambda kv: -len(kv[0])):
        if lower.endswith(ending):
            return kind
    kind, _ = mimetypes.MimeTypes(filenames=()).guess_type(name)  # Python's own table, not the machine's
    return kind or "application/octet-stream"


def file_properties(source: Path, crate_path: str, description: str | None = None) -> JSONObject:
    """A ``File`` data entity's properties: its name, size, media type and last change."""
    st = source.stat()
    props: JSONObject = {"name": Path(crate_path).name, "contentSize": str(st.st_size), "dateModified": iso_time(st.st_mtime),
                         "encodingFormat": media_type(crate_path)}
    if description:
        props["description"] = description
    return props


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "x"


def one_or_list(refs: list) -> object:
    """A single value for one reference (RO-Crate 1.1's compact form), a list for several."""
    return refs[0] if len(refs) == 1 else refs


def people(crate: ROCrate, authors: object) -> list[CrateEntity]:
    """CITATION.cff's authors as ``Person`` (family and given names, affiliation as an ``Organization``) or
    ``Organization`` entities, one per name."""
    out = []
    for a in authors or []:
        if not isinstance(a, dict):
            continue
        if a.get("family-names"):
            name = " ".join(str(a[k]) for k in ("given-names", "family-names") if a.get(k))
            props: JSONObject = {"@type": "Person", "name": name, "familyName": str(a["family-names"])}
            if a.get("given-names"):
                props["givenName"] = str(a["given-names"])
            if a.get("affiliation"):
                org = str(a["affiliation"])
                props["affiliation"] = {"@id": context_entity(crate, f"#organization-{slug(org)}",
                                                              {"@type": "Organization", "name": org}).id}
        elif a.get("name"):
            name, props = str(a["name"]), {"@type": "Organization", "name": str(a["name"])}
        else:
            continue
        key = f"#{str(props['@type']).lower()}-{slug(name)}"
        entity = context_entity(crate, key, props)
        if "affiliation" in props and "affiliation" not in entity:  # one entity per name: an affiliation given anywhere
            entity["affiliation"] = props["affiliation"]
        out.append(entity)
    return out


def context_entity(crate: ROCrate, key: str, props: JSONObject) -> CrateEntity:
    """The crate's entity ``key``, added with ``props`` when it has none yet."""
    from rocrate.model.contextentity import ContextEntity

    return crate.get(key) or crate.add(ContextEntity(crate, key, properties=props))


def citation_entities(crate: ROCrate, cff: Mapping[str, object]) -> list[CrateEntity]:
    """The works ``CITATION.cff`` asks users to cite beside medfc (its ``references``), as contextual entities."""
    from rocrate.model.contextentity import ContextEntity

    out = []
    for n, ref in enumerate(cff.get("references") or [], 1):
        if not isinstance(ref, dict) or not ref.get("title"):
            continue
        props: JSONObject = {"@type": CFF_TYPES.get(str(ref.get("type")), "CreativeWork"), "name": str(ref["title"])}
        authors = people(crate, ref.get("authors"))
        if authors:
            props["author"] = one_or_list([{"@id": a.id} for a in authors])
        for prop, value in (("datePublished", ref.get("year")), ("url", ref.get("url") or ref.get("repository-code")),
                            ("license", ref.get("license"))):
            if value:
                props[prop] = str(value)
        out.append(crate.add(ContextEntity(crate, f"#reference-{n}", properties=props)))
    return out


def licence_properties(cff: Mapping[str, object], licence_file: Path | None) -> tuple[str, JSONObject] | None:
    """The workflow's licence: its SPDX id from CITATION.cff, named by the first line of LICENSE."""
    spdx = cff.get("license")
    if not isinstance(spdx, str) or not spdx:
        return None
    name = spdx
    if licence_file is not None and licence_file.is_file():
        first = licence_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        name = first[0].strip() if first else spdx
    return f"{SPDX}{spdx}", {"@type": "CreativeWork", "name": name, "identifier": spdx}


def software_properties(software: Mapping[str, object]) -> list[tuple[str, JSONObject]]:
    """One ``SoftwareApplication`` per installed package of a software record, Python first: Python by
    python.org, a package by its PyPI page, medfc (not on PyPI) by a local id."""
    out = []
    if software.get("python"):
        props: JSONObject = {"@type": "SoftwareApplication", "name": "Python", "softwareVersion": str(software["python"]), "url": PYTHON_URL}
        if software.get("implementation") or software.get("platform"):
            props["description"] = " on ".join(str(software[k]) for k in ("implementation", "platform") if software.get(k))
        out.append((PYTHON_URL, props))
    for name, version in (software.get("packages") or {}).items():
        if not version:
            continue
        props = {"@type": "SoftwareApplication", "name": str(name), "softwareVersion": str(version)}
        if name == "medfc":
            out.append(("#software-medfc", {**props, "description": "The library of this workflow (workflow/Snakefile)."}))
        else:
            page = f"{PYPI}{slug(str(name))}/"
            out.append((page, {**props, "url": page}))
    return out
