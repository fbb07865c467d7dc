"""schemathesis hooks for `make fuzz` (test/fuzz/run.ts loads them through the generated config).

One check of our own: every request of the run carries the first environment's credentials, and the run
draws ids (players, sessions, items, inventories) from both environments (the config's dictionaries).
An answer that acts on, or shows, an id of the other environment is a cross-tenant leak.
"""

import itertools
import os

import schemathesis

FOREIGN_IDS = frozenset(filter(None, os.environ.get("HEARTH_FOREIGN_IDS", "").split(",")))


@schemathesis.check
def foreign_ids_stay_foreign(ctx, response, case):
    """A request naming another environment's object is refused, and no answer shows one."""
    if not FOREIGN_IDS:
        return None
    named = {str(value) for value in (case.path_parameters or {}).values()} & FOREIGN_IDS
    if named and 200 <= response.status_code < 300:
        raise AssertionError(
            f"{case.method} {case.formatted_path} named another environment's id {sorted(named)} and answered "
            f"{response.status_code}: it must be refused (404) and change nothing"
        )
    # A refusal may name the id it was asked for; an answer that acted must not show one.
    if not 200 <= response.status_code < 300:
        return None
    text = response.text or ""
    shown = sorted(i for i in FOREIGN_IDS if i in text)
    if shown:
        raise AssertionError(f"{case.method} {case.formatted_path} answered another environment's ids {shown}")
    return None


_ADDRESSES = itertools.count()


@schemathesis.hook
def before_call(context, case, kwargs):
    """Each request comes from an address of its own, as players behind the ingress do.

    The fuzzed API trusts X-Forwarded-For from loopback (run.ts sets HEARTH_TRUSTED_PROXIES), so the
    per-address limits (600 requests a minute without a credential, spec §8) count each case on its
    own: the fuzzer's thousands of requests a minute from one machine reach the routes' logic, and the
    unauthenticated copies ignored_auth sends get 401, not the 429 their shared address would earn.
    The limits themselves are held by test/api/rate-limits.test.ts.
    """
    if case.headers is None:
        case.headers = {}
    # A counter, not `random`: hypothesis seeds the random module for each example, so every case
    # would draw the same address.
    n = next(_ADDRESSES)
    case.headers["X-Forwarded-For"] = f"198.18.{(n // 254) % 256}.{n % 254 + 1}"
