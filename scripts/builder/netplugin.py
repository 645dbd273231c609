"""A site's NCCL net plugin (matrix `net_plugin`, e.g. aws-ofi-nccl for EFA, which no distro archive carries): found
in the local wheel folders and staged into build/wheels, where the image's Dockerfile installs it
(templates/partials/net_plugin.j2) and NCCL_NET_PLUGIN names it."""
from __future__ import annotations

import shutil
from pathlib import Path

from ..errors import UserError
from ..plan.spec import ImageSpec


def stage_net_plugin(spec: ImageSpec, folders: list[Path], target: Path) -> str | None:
    """Copy the image's net plugin file from the first wheel folder holding it into `target`; its name, or None
    when the image has none. A plugin named in the matrix but in no folder is a UserError naming the fix."""
    if not spec.net_plugin:
        return None
    for folder in folders:
        source = folder / spec.net_plugin
        if source.is_file():
            partial = target / f".{spec.net_plugin}.part"
            try:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, partial)
                partial.replace(target / spec.net_plugin)
            except OSError as exc:
                partial.unlink(missing_ok=True)
                raise UserError(f"cannot stage {source} into {target} ({exc.strerror}); check free space and "
                                f"permissions") from None
            return spec.net_plugin
    searched = ", ".join(str(f) for f in folders) or "none: WHEELS and PIP_FIND_LINKS name no local folder"
    raise UserError(f"{spec.tag}: its net_plugin {spec.net_plugin} is in no wheel folder (searched: {searched}); "
                    f"put the site's plugin file (aws-ofi-nccl's .deb or its libnccl-net-*.so) into one, or set "
                    f"WHEELS=<the folder holding it>")
