#!/usr/bin/env python3
"""Writes protonpass.zip: data.json as `Proton Pass/data.json`, as Proton Pass lays out its
unencrypted export archive. Deterministic (fixed time stamp); run from anywhere."""
import pathlib, zipfile
here = pathlib.Path(__file__).resolve().parent
with zipfile.ZipFile(here / "protonpass.zip", "w", zipfile.ZIP_DEFLATED) as z:
    info = zipfile.ZipInfo("Proton Pass/data.json", date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, (here / "data.json").read_bytes())
