"""Checks on built distributions that a package index would see.

Every rule reads the metadata text (a wheel's ``METADATA``, an sdist's ``PKG-INFO``), so
the tests can run them on strings and ``run.py`` on the files it just built.
"""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Iterable
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

__all__ = ["LICENSE_EXPRESSION", "metadata_of", "problems", "requires_dist"]

LICENSE_EXPRESSION = "Apache-2.0"


def requires_dist(metadata: str) -> list[str]:
    """The ``Requires-Dist`` values, in file order."""
    return HeaderParser().parsestr(metadata).get_all("Requires-Dist") or []


def problems(metadata: str, core_version: str, license_files: Iterable[str]) -> list[str]:
    """What keeps this distribution off a package index, or from installing beside the core
    of the same checkout: direct references (``name @ file:///...``: an index rejects them,
    and they point at one machine's folders), an unparseable requirement, a ``toolmend``
    range that excludes the core being built, a missing license."""
    headers = HeaderParser().parsestr(metadata)
    found: list[str] = []
    for line in requires_dist(metadata):
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            found.append(f"Requires-Dist: {line}: not a valid requirement ({exc})")
            continue
        if requirement.url is not None or "file:" in line:
            found.append(f"Requires-Dist: {line}: a direct reference; name a version range")
        elif canonicalize_name(requirement.name) == "toolmend" and not (
            requirement.specifier.contains(Version(core_version), prereleases=True)
        ):
            found.append(f"Requires-Dist: {line}: excludes the core being built ({core_version})")
    if headers.get("License-Expression") != LICENSE_EXPRESSION:
        found.append(f"License-Expression is {headers.get('License-Expression')!r}")
    declared = headers.get_all("License-File") or []
    if "LICENSE" not in declared:
        found.append(f"License-File lists {declared}, not LICENSE")
    elif not any(name.endswith("LICENSE") for name in license_files):
        found.append("the LICENSE file is not in the archive")
    return found


def metadata_of(dist: Path) -> tuple[str, list[str]]:
    """The metadata text of a wheel or sdist, and the archive's file names."""
    if dist.suffix == ".whl":
        with zipfile.ZipFile(dist) as archive:
            names = archive.namelist()
            (member,) = [n for n in names if n.endswith(".dist-info/METADATA")]
            return archive.read(member).decode("utf-8"), names
    with tarfile.open(dist) as archive:
        names = archive.getnames()
        (member,) = [n for n in names if n.count("/") == 1 and n.endswith("/PKG-INFO")]
        handle = archive.extractfile(member)
        assert handle is not None
        return handle.read().decode("utf-8"), names
