"""schemathesis hooks for `make fuzz` (test/fuzz/run.ts loads them through the generated config).

One check of our own: every request of the run carries the first environment's credentials, and the run
draws ids (players, sessions, items, inventories) from both environments (the config's dictionaries).
An answer that acts on, or shows, an id of the other environment is a cross-tenant leak.
"""

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
