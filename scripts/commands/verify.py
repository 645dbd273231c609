"""The verify stage's command: verify in a container, a matrix image or a foreign one."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .common import (
    one_platform,
    out,
    selected,
)

if TYPE_CHECKING:
    pass

import argparse

from ..errors import UserError
from ..settings import Settings


def cmd_verify(settings: Settings, args: argparse.Namespace) -> int:
    from ..builder.engine import connect
    from ..fsutil import check_writable
    from ..run_verify import echo_to_stdout, find_local_image, verify_all
    from ..tables import verify_summary
    ref = _outside_matrix(settings)
    if ref is not None:                       # IMAGE=<any local image, not a matrix tag>
        local = find_local_image(ref, lambda: connect(settings.child_env))
        if local.client is not None:
            return _verify_foreign(settings, ref, local.client)
        _matrix_refusal(settings, local.why_not)
    specs = selected(settings)
    platform = one_platform(settings, "verify")
    targets = [spec.targets(platform)[0] for spec in specs]
    check_writable(settings.reports)
    client = connect(settings.child_env)
    outcomes = verify_all(client, targets, shm_size=settings.shm_size, timeout=settings.verify_timeout,
                          extra_args=list(settings.verify_args), reports=settings.reports, echo=echo_to_stdout)
    out()
    out(verify_summary(outcomes))
    if any(o.problem for o in outcomes):
        return 2
    return 0 if all(o.exit_code == 0 and not o.mismatches for o in outcomes) else 1


def _outside_matrix(settings: Settings) -> str | None:
    """The one image name IMAGE gives when it is no rendered tag (nor a list, nor all); None: a matrix selection."""
    from ..render import requested_tags
    name = settings.image.strip()
    if requested_tags(settings.image) != (name,) or name == "all" or (settings.images / name / "spec.json").is_file():
        return None
    return name


def _matrix_refusal(settings: Settings, why_not: str) -> None:
    """IMAGE is neither a matrix tag nor a local image: the matrix's own error, with why no local image was
    found when the lookup itself failed."""
    try:
        selected(settings)
    except UserError as exc:
        if why_not:
            raise UserError(f"{exc} ({why_not})") from None
        raise


def _verify_foreign(settings: Settings, ref: str, client: object) -> int:
    """Verify any local image with this checkout's verify/ mounted."""
    from ..fsutil import check_writable
    from ..run_verify import echo_to_stdout, verify_foreign_image
    from ..tables import verify_summary
    check_writable(settings.reports)
    outcome = verify_foreign_image(client, ref, shm_size=settings.shm_size, timeout=settings.verify_timeout,
                                   extra_args=list(settings.verify_args), reports=settings.reports,
                                   echo=echo_to_stdout)
    out()
    out(verify_summary([outcome]))
    return 0 if outcome.exit_code == 0 else 1
