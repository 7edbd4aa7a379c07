#!/usr/bin/env python3
"""csv_check.py CSV JSON

Reads what a tool wrote with --format csv (CSV) and with --format json (JSON Lines) for the
same command, with Python's csv and json modules, and checks that the CSV is the JSON
flattened: one header, then a row a record, every row as long as the header; the header the
records' key paths ("run.median_ms"; a list's items share their keys' columns); and in each
row the values that do not change from run to run (all but times and seeds) equal to the
JSON's, written as CSV writes them (null: empty; a list's values joined by ';'; three sizes
"AxBxC"). Prints the number of columns and one line a row (its layer, exit code and error
message) for FileCheck; exits 1 on the first difference.
"""
import csv
import json
import sys

# Values that differ between the two runs: clocks and the seed taken from one.
VARYING = {"compile_ms", "run.seed", "run.median_ms", "run.tflops"}


def text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and len(value) == 3 and all(isinstance(v, int) for v in value):
        return "x".join(str(v) for v in value)
    return str(value)


def flatten(record, prefix="", columns=None):
    """[(column, value text)] of a record, a list's items joined by ';'. An absent part (null)
    still has its columns, which the template of a present one gives; here the CSV's header
    gives them instead: a null part's columns are the header's under its path."""
    columns = [] if columns is None else columns
    for key, value in record.items():
        path = prefix + key
        if isinstance(value, dict):
            flatten(value, path + ".", columns)
        elif isinstance(value, list) and (not value or isinstance(value[0], dict)):
            items = [flatten(item, path + ".") for item in value]
            if items:
                for i, (column, _) in enumerate(items[0]):
                    columns.append((column, ";".join(item[i][1] for item in items)))
            else:
                columns.append((path + ".", None))  # every column under it is empty
        elif value is None:
            columns.append((path, None))
        else:
            columns.append((path, text(value)))
    return columns


def matches(header, start, column, value):
    """How many header columns from `start` the flattened (column, value) covers, or 0."""
    if value is None:  # a null part or value: its columns are empty ones under its path
        count = 0
        while start + count < len(header) and (header[start + count] == column or
                                               header[start + count].startswith(column + ".")
                                               or (column.endswith(".") and
                                                   header[start + count].startswith(column))):
            count += 1
        return count
    return 1 if start < len(header) and header[start] == column else 0


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: csv_check.py CSV JSON\n")
        return 2
    with open(argv[1], newline="") as f:
        rows = list(csv.reader(f))
    with open(argv[2]) as f:
        records = [json.loads(line) for line in f if line.strip()]
    if not rows:
        sys.stderr.write("csv_check.py: no header\n")
        return 1
    header, rows = rows[0], rows[1:]
    if len(rows) != len(records):
        sys.stderr.write("csv_check.py: %d rows, %d JSON records\n" % (len(rows), len(records)))
        return 1
    print("columns: %d" % len(header))
    for n, (row, record) in enumerate(zip(rows, records), 1):
        if len(row) != len(header):
            sys.stderr.write("csv_check.py: row %d has %d fields, the header %d\n"
                             % (n, len(row), len(header)))
            return 1
        at = 0
        for column, value in flatten(record):
            count = matches(header, at, column, value)
            if not count:
                sys.stderr.write("csv_check.py: row %d: JSON's %s is not the header's column "
                                 "%d (%s)\n" % (n, column, at + 1,
                                                header[at] if at < len(header) else "none"))
                return 1
            for i in range(at, at + count):
                want = "" if value is None else value
                if header[i] not in VARYING and row[i] != want:
                    sys.stderr.write("csv_check.py: row %d: %s is %r, JSON's %r\n"
                                     % (n, header[i], row[i], want))
                    return 1
            at += count
        if at != len(header):
            sys.stderr.write("csv_check.py: row %d: columns from %s have no JSON key\n"
                             % (n, header[at]))
            return 1
        fields = dict(zip(header, row))
        print("row %d: layer=%s exit=%s message=%s" % (n, fields["layer"] or "-",
                                                      fields["exit_code"],
                                                      fields["error.message"] or "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
