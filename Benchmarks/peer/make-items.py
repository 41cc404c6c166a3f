#!/usr/bin/env python3
"""Writes one reproducible item set twice: a KeePass 2 XML file (for `keepassxc-cli import`)
and a generic CSV (for `coffer import --from csv`, spec/cli.md §8.6).

    make-items.py COUNT OUT.xml OUT.csv

Items: service name, username, a 20-character password, a URL, a short note for one in three,
so both tools store the same fields. Deterministic (seeded) so every run compares the same data.
"""
import base64
import csv
import random
import sys
import uuid
from xml.sax.saxutils import escape

ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_.!"


def items(count):
    rng = random.Random(20261122 + count)
    for n in range(count):
        password = "".join(rng.choice(ALPHABET) for _ in range(20))
        notes = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(20, 120))) if n % 3 == 0 else ""
        yield {
            "title": f"service-{n}.example",
            "username": f"user{n}@example.com",
            "password": password,
            "url": f"https://site{n}.example/login",
            "notes": notes,
            "uuid": base64.b64encode(uuid.UUID(int=rng.getrandbits(128)).bytes).decode(),
        }


def write_xml(path, rows):
    def string(key, value, protect=False):
        attribute = ' ProtectInMemory="True"' if protect else ""
        return f"<String><Key>{key}</Key><Value{attribute}>{escape(value)}</Value></String>"

    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<KeePassFile>\n')
        out.write("<Meta><Generator>coffer-bench</Generator><DatabaseName>bench</DatabaseName></Meta>\n")
        root_uuid = base64.b64encode(uuid.UUID(int=1).bytes).decode()
        out.write(f"<Root><Group><UUID>{root_uuid}</UUID><Name>Root</Name>\n")
        for row in rows:
            out.write(
                f"<Entry><UUID>{row['uuid']}</UUID>"
                + string("Title", row["title"])
                + string("UserName", row["username"])
                + string("Password", row["password"], protect=True)
                + string("URL", row["url"])
                + string("Notes", row["notes"])
                + "</Entry>\n"
            )
        out.write("</Group></Root>\n</KeePassFile>\n")


def write_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["title", "username", "password", "url", "notes"])
        for row in rows:
            writer.writerow([row["title"], row["username"], row["password"], row["url"], row["notes"]])


def main():
    count, xml_path, csv_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rows = list(items(count))
    write_xml(xml_path, rows)
    write_csv(csv_path, rows)


if __name__ == "__main__":
    main()
