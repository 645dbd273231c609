"""The fleet side: verification on clusters (Slurm scripts and bundles, Kubernetes manifests), the fleet report, the
node gate, and isolation of a bad node. The release side (push, registry, referrers, attest, signing, SBOM, report)
is scripts/publish/."""
