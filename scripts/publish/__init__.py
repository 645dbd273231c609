"""Publish: what hands the rendered images to other systems (CI matrix, bake) and the release path (push, SBOM,
signed attestations attached to digests, read back by report). Clusters and the fleet: scripts/fleet/."""
