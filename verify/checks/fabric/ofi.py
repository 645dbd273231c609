"""Libfabric's providers as `fi_info` lists them (verify/FACTS.md, `ofi_providers`, `ofi_query`), beside EFA.

NCCL reaches EFA only through aws-ofi-nccl over Libfabric's `efa` provider. A listing asked for every provider, or for
`efa`, that holds `efa` shows the provider opened the node's EFA devices (ofiwg/libfabric#5689: `provider: efa`,
`domain: efa_0-rdm`); one that holds none, with the EFA devices in the process's reach, or `fi_info -l` without
`efa` (a Libfabric built without it), is the image's Libfabric unable to drive them. An empty answer alone proves
nothing of the image: `fi_info -p efa` answers -61 on an instance, or in a container, without EFA devices too
(ofiwg/libfabric#10794), which is the job's or the instance's, not the image's."""
from __future__ import annotations

from ...facts import Adapter, FabricFacts
from ...findings import Findings
from ...result import CheckResult

EFA = "efa"
ASKED = ("all", EFA)       # a listing that would hold `efa` if the provider opened a device


def listed(facts: FabricFacts) -> list[str] | None:
    providers = facts.get("ofi_providers")
    return [str(p) for p in providers] if isinstance(providers, list) else None


def lacks_efa(facts: FabricFacts, adapters: list[Adapter]) -> str | None:
    """What the image lacks, in FABRIC_EFA_PLUGIN_MISSING's words, where EFA adapters are there; else None."""
    providers, query = listed(facts), facts.get("ofi_query")
    efa = [str(a.get("name")) for a in adapters if a.get("driver") == EFA]
    if not efa or providers is None or EFA in providers:
        return None
    shown = ", ".join(providers) or "none (fi_getinfo -61)"
    if query == "list":
        return f"Libfabric's efa provider (`fi_info -l` lists {shown}: the library was built without it)"
    reach = bool(facts.get("uverbs")) or bool(set(efa) & set(facts.get("verbs_devices") or []))
    if query in ASKED and reach:
        return (f"a Libfabric efa provider that opens the EFA device(s) {', '.join(efa)} (`fi_info` "
                f"{'-p efa ' if query == EFA else ''}lists {shown})")
    return None


def said(facts: FabricFacts) -> str | None:
    providers = listed(facts)
    if providers is None:
        return None
    asked = {"all": "every provider", "list": "the providers built in (-l)", None: "what is not shown"}.get(
        facts.get("ofi_query"), f"the {facts.get('ofi_query')} provider")
    return f"fi_info, asked for {asked}, lists {', '.join(providers) or 'no provider (fi_getinfo -61)'}"


def opened(facts: FabricFacts) -> bool:
    """Libfabric's efa provider answered with an endpoint: it opened the EFA devices."""
    return EFA in (listed(facts) or []) and facts.get("ofi_query") in (*ASKED, None)


def alone(facts: FabricFacts, result: CheckResult) -> CheckResult | None:
    """With no adapter, device or verbs list read: a listing that holds `efa` passes on that alone; one without it
    is said and not judged (whether the node has EFA devices, and whether they were given, is not known)."""
    if (line := said(facts)) is None:
        return None
    result.details.append(line)
    if not opened(facts):
        return None
    return Findings().apply(result, "Libfabric's EFA provider opened the node's EFA device(s) (fi_info lists efa): "
                            "the image's Libfabric drives them; the ports, the memlock limit and NCCL's own choice of "
                            "network were not recorded: not assessed")
