"""The chaos run, small and seeded (benchmarks/chaos.py runs it at full size): the live-shaped workflow — the
crawl of the portal, the HealthFC release download, ClinicalTrials.gov's search, PubMed, the three evidence
searches, CliniFact's zero-shot scoring and MedSNIP through an OpenAI-compatible server — against one local
fake of every service (tests/helpers/chaos.py). A clean run first; then, with empty caches, a run whose
services answer 15% of the requests with a fault (5xx, 429 with a short and with a far too long
Retry-After, a cut body, an error sent with HTTP 200, a reset connection, a slow answer) and whose first
attempt is killed with SIGKILL (Snakemake and its jobs) at a random moment, then unlocked and rerun until
it completes. Its results are the clean run's (run statistics aside), no stray temporary file is left, and no
call the clean run made once was paid for again beyond the calls in flight at a kill."""

from __future__ import annotations

import json

import pytest

from tests.helpers.chaos import chaos_run

pytestmark = pytest.mark.workflow

KILLS = 1
# the calls a kill may lose: two cores run two jobs; the crawl keeps up to concurrent_requests_per_domain (2 by
# default) requests in flight, every other job one
IN_FLIGHT = 2 + 1


@pytest.fixture(scope="module")
def chaos(tmp_path_factory):
    # the clean run beside the chaos run (each against its own world): the chaos run's retries and waits overlap the
    # clean run's work
    return chaos_run(tmp_path_factory.mktemp("chaos"), seed=3, fault_rate=0.15, kills=KILLS, small=True, kill_window=(5.0, 20.0),
                     together=True)


def test_the_chaos_run_completes_with_the_clean_runs_results(chaos):
    summary = json.dumps(chaos.summary(), default=str)  # whole in a failure's message (a dict's repr is cut)
    assert chaos.differ == [], summary
    assert len(chaos.same) > 50 and chaos.kills == KILLS, summary
    assert not any(name.rsplit("/", 1)[-1].startswith(".") for name in chaos.same + chaos.volatile)  # no orphaned temporaries
    assert chaos.summary()["faults"] >= 15 and len(chaos.summary()["faults_by_kind"]) >= 6, summary


def test_no_answer_is_paid_for_twice_beyond_the_calls_in_flight_at_a_kill(chaos):
    summary = json.dumps(chaos.summary(), default=str)  # whole in a failure's message (a dict's repr is cut)
    assert sum(chaos.repaid.values()) <= IN_FLIGHT * KILLS, summary
    assert chaos.summary()["answers"]["chaos"] <= chaos.summary()["answers"]["clean"] + IN_FLIGHT * KILLS, summary
