"""pytest plugin for tests run under `mcsim test`: the `mcsim` fixture.

    # test_lock.py
    def test_add_lock_excludes(mcsim):
        for execution in mcsim.executions():      # hundreds, in this one test
            execution.run_participants(worker)    # worker uses mcsim.Participant

    mcsim test --clients 3 --executions 500 -- python3 -m pytest -q test_lock.py::test_add_lock_excludes

with mcsim installed by pip (the plugin is registered by its entry point), or, from the
repository, with `helpers/python` on `PYTHONPATH` and `-p pytest_mcsim`. Give `mcsim test`
one test at a time: its executions are that test's. A participant's exception,
`mcsim.fail(…)` or a section entered twice fails the execution; once mcsim has shrunk the
failure (its report and replay line are on mcsim's output), `executions()` raises and the
test fails. Outside `mcsim test` the test is skipped, unless `MCSIM_SERVERS` names servers
to run it against once (a real memcached, say).
"""

import os

import pytest

import mcsim_control


@pytest.fixture
def mcsim():
    """The helper (`mcsim_control`): `executions()`, `Participant`, `fail`, `servers()`."""
    if not mcsim_control.UNDER_MCSIM and "MCSIM_SERVERS" not in os.environ:
        pytest.skip("run under `mcsim test` (or with MCSIM_SERVERS set)")
    return mcsim_control
