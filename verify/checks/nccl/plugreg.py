"""A net plugin refusing to register a buffer as an invalid argument: the image's NCCL, plugin and their libraries do
not match, never the adapter. NCCL's own verbs transport (`NET/IB...`, whose `ibv_reg_mr` EINVAL is the driver's) and
sockets are not plugins. Pure."""
from __future__ import annotations

import re

# aws-ofi-nccl: `NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument` (NCCL
# 2.19+ beside libfabric before EFA installer 1.29: aws/aws-ofi-nccl#584); GCP's GPUDirect-TCPXO plugin: `NET/FasTrak
# ...: INVALID_ARGUMENT: Buffer registration request does not have a valid fd set.` (a gRPC-style status). Out of
# locked memory is ENOMEM (-12), judged as memlock.
_PLUGIN = r"NET/(?!IB|Socket\b)\w+"
_EINVAL = r"(?:\bINVALID_ARGUMENT\b|\bInvalid argument\b|\bRC: -22\b|\bEINVAL\b)"
_REGISTER = r"(?:[Rr]egist(?:er|ration)|\bregMr\b)"
REFUSED = re.compile(rf"{_PLUGIN}[^|\n]*?(?:{_EINVAL}[^|\n]*?{_REGISTER}|{_REGISTER}[^|\n]*?{_EINVAL})[^|\n]*")
# the same refusal as NCCL prints it (a WARN line), for `verify explain`: any registration the plugin refused, whatever
# errno (ENOMEM is then read as memlock by the judge)
WARNED = re.compile(rf"NCCL WARN {_PLUGIN}\b[^\n]*?(?:Unable to register memory|{_REGISTER}[^\n]*?(?:{_EINVAL}|fail)|"
                    rf"{_EINVAL}[^\n]*?{_REGISTER})[^\n]*")
