"""Publish: everything that hands the rendered images to other systems (CI matrix, bake, Kubernetes, Slurm) and
the release path (push, SBOM, verify reports and SBOMs attached to digests, read back)."""
