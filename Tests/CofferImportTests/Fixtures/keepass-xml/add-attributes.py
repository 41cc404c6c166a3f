#!/usr/bin/env python3
"""add-attributes.py IN OUT: adds custom attributes, tags and a TOTP to entries of a keepassxc-cli XML export."""
import sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
def add(entry, key, value, protect=False):
    s = ET.SubElement(entry, "String")
    ET.SubElement(s, "Key").text = key
    v = ET.SubElement(s, "Value"); v.text = value
    if protect: v.set("ProtectInMemory", "True")
    # keep <String>s before <AutoType>/<History>, as KeePass writes them
    entry.remove(s); idx = [i for i, c in enumerate(entry) if c.tag == "String"][-1] + 1; entry.insert(idx, s)
for group in tree.iter("Group"):
    for entry in group.findall("Entry"):
        title = next(s.find("Value").text for s in entry.findall("String") if s.find("Key").text == "Title")
        if title == "GitHub":
            add(entry, "otp", "otpauth://totp/GitHub:octocat?secret=JBSWY3DPEHPK3PXP&period=30&digits=6&issuer=GitHub", True)
            add(entry, "Recovery codes", "1111-2222\n3333-4444", True)
            entry.find("Tags").text = "dev;code, social"
        elif title == "Files":
            add(entry, "PIN", "0042", True)
            add(entry, "Security question: first pet", "Rex the 🐕")
tree.write(sys.argv[2], encoding="UTF-8", xml_declaration=True)
