"""A net plugin that is there and cannot be loaded into the process (issue 35, batch 134): dlopen found the file and
failed on what it needs (a glibc or libstdc++ symbol version the image lacks, a library it links missing, a symbol
NCCL's release does not export), as against a plugin that is absent (harmless on IB: NCCL's own transports run).

NCCL logs dlopen's error in its own words (github.com/NVIDIA/nccl): 2.18.6 src/net.cc `NET/Plugin : Plugin load (%s)
returned %d : %s`; 2.21.5 `NET/Plugin: Plugin load returned %d : %s : when loading %s` (or `Most recent plugin load
returned %d : %s. All attempts to load '%s' also failed.`); 2.22 on, `NET/Plugin: %s` with dlerror()'s text alone
(src/plugin/plugin_open.cc; an absent file goes to `Could not find:` instead). An absent plugin's dlerror names the
plugin itself (`libnccl-net.so: cannot open shared object file: No such file or directory`) and is no load error.

Where the job asked NCCL for that plugin's network (`NCCL WARN Error: network gIB not found.`, `Failed to initialize
any NET plugin`), the image's libraries that cannot load it own the failure, never the node. Pure."""
from __future__ import annotations

import os
import re

# dlerror()'s texts for a file found and not loaded (glibc's dl-version.c, dl-load.c, dl-lookup.c)
_DLERROR = (r"(?:version `[^'\n]+' not found|cannot open shared object file|undefined symbol: \S+|wrong ELF class"
            r"|invalid ELF header|file too short|cannot enable executable stack|failed to map segment)")
# the message NCCL formatted (ncclog.message), with the library dlopen names and the plugin's name where printed
LOAD_ERROR = re.compile(r"^NET/Plugin ?: ?(?:(?:Most recent )?[Pp]lugin load (?:\((?P<named>[^)]*)\) )?returned -?\d+ : )?"
                        r"(?P<error>(?P<lib>[^\s:]+): " + _DLERROR + r"[^\n]*?)"
                        r"(?: : when loading (?P<loading>\S+)|\. All attempts to load '(?P<all>[^']*)' also failed\.)?\s*$")


def load_error(message: str) -> str | None:
    """dlopen's error where the message says a plugin was found and failed to load; None for an absent plugin."""
    hit = LOAD_ERROR.match(message)
    if not hit:
        return None
    tried = " ".join(filter(None, (hit.group("named"), hit.group("loading"), hit.group("all")))).split()
    missing = "cannot open shared object file" in hit.group("error") and "(required by" not in hit.group("error")
    lib = os.path.basename(hit.group("lib"))
    if missing and (lib in {os.path.basename(t) for t in tried} or (not tried and lib.startswith("libnccl-net"))):
        return None                 # the plugin itself is not there: no plugin, not one that failed to load
    return hit.group("error").strip()
