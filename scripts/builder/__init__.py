"""Build: engine discovery, distro bases, local wheels, and BuildKit builds from images/<tag>/."""
