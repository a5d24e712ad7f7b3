"""The pytest plugin of `mcsim_control` under the name `-p pytest_mcsim` takes, for a
program run from the repository with `helpers/python` on `PYTHONPATH` (installed by pip,
the plugin is registered by its entry point: see `mcsim_control.pytest_plugin`)."""

from mcsim_control.pytest_plugin import mcsim  # noqa: F401
