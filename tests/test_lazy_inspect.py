"""lazy_inspect.py: importing orjson (through json_wire) leaves `inspect` and `platform` unimported, and
`dataclasses` works as before once something makes a dataclass, `uuid` as it does without the stand-ins; any other
importer gets the real `inspect` and `platform`. Importing pathlib the CLI's way (`coding.paths`) leaves
`ipaddress` unimported, and `urllib.parse` checks bracketed hosts as before."""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = """
import json, sys
from agent_forge.ai import json_wire
json_wire.set_backend("orjson")
after_orjson = sorted({"dataclasses", "inspect", "ast", "tokenize"} & set(sys.modules))
import dataclasses
import inspect
stand_in = type(dataclasses.inspect).__name__

@dataclasses.dataclass
class Point:
    x: int
    y: int = 2

print(json.dumps({"after_orjson": after_orjson, "stand_in": stand_in, "doc": Point.__doc__,
                  "real": type(inspect).__name__, "handed": dataclasses.inspect is inspect,
                  "signature": str(inspect.signature(Point)), "point": repr(Point(1)),
                  "encoded": json_wire.encode({"a": [1, "\u00e9"]}).decode()}))
"""


def test_orjson_is_imported_without_inspect_and_dataclasses_still_work():
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    seen = json.loads(proc.stdout)
    checked = (3, 11) <= sys.version_info < (3, 14)
    assert seen["after_orjson"] == (["dataclasses"] if checked else ["ast", "dataclasses", "inspect", "tokenize"])
    assert seen["stand_in"] == ("_InspectStandIn" if checked else "module")  # `import inspect` above: the real one
    assert seen["real"] == "module" and seen["handed"]  # the first class made handed `dataclasses` the real one
    assert seen["doc"] == "Point(x: int, y: int = 2)" and seen["signature"] == "(x: int, y: int = 2) -> None"
    assert seen["point"] == "Point(x=1, y=2)" and seen["encoded"] == '{"a":[1,"\u00e9"]}'


_PLATFORM_CHILD = """
import json, os, sys
from agent_forge.ai import json_wire
json_wire.set_backend("orjson")
imported = sorted({"platform", "uuid"} & set(sys.modules))
import uuid
linux, aix, stand_in = uuid._LINUX, uuid._AIX, type(uuid.platform).__name__
version = uuid.platform.python_version()  # any other attribute: the real module's
import platform
handed = uuid.platform is platform  # the first read handed `uuid` the real one
print(json.dumps({"imported": imported, "linux": linux, "aix": aix, "stand_in": stand_in, "handed": handed,
                  "version_ok": version == platform.python_version(), "real": type(platform).__name__,
                  "system": platform.system(), "uname": os.uname().sysname, "node": uuid.getnode() > 0}))
"""


def test_orjson_is_imported_without_platform_and_uuid_reads_the_system_as_before():
    proc = subprocess.run([sys.executable, "-c", _PLATFORM_CHILD], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    seen = json.loads(proc.stdout)
    deferred = (3, 11) <= sys.version_info < (3, 14) and sys.platform not in ("win32", "darwin")
    assert seen["imported"] == (["uuid"] if deferred else ["platform", "uuid"])
    assert seen["stand_in"] == ("_PlatformStandIn" if deferred else "module")
    assert seen["linux"] == (seen["system"] == "Linux") and seen["aix"] == (seen["system"] == "AIX")
    assert seen["system"] == seen["uname"] and seen["real"] == "module" and seen["version_ok"] and seen["node"]
    assert seen["handed"]


_IPADDRESS_CHILD = """
import json, sys
import agent_forge.coding.paths
imported = "ipaddress" in sys.modules
import urllib.parse
stand_in = type(urllib.parse.ipaddress).__name__
host = urllib.parse.urlsplit("http://[::1]:8080/v1").hostname
try:
    urllib.parse.urlsplit("http://[not-an-address]/")
    refused = False
except ValueError:
    refused = True
import ipaddress
print(json.dumps({"imported": imported, "stand_in": stand_in, "host": host, "refused": refused,
                  "real": type(ipaddress).__name__, "handed": urllib.parse.ipaddress is ipaddress}))
"""


def test_pathlib_is_imported_without_ipaddress_and_bracketed_hosts_are_checked_as_before():
    proc = subprocess.run([sys.executable, "-c", _IPADDRESS_CHILD], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    seen = json.loads(proc.stdout)
    deferred = (3, 11) <= sys.version_info < (3, 14)
    assert seen["imported"] is False or not deferred
    assert seen["stand_in"] == ("_IpaddressStandIn" if deferred else "module")
    assert seen["host"] == "::1" and seen["refused"] and seen["real"] == "module" and seen["handed"]


_COPY_AND_DATETIME_CHILD = """
import json, sys
from agent_forge.ai import json_wire
json_wire.set_backend("orjson")
after_orjson = sorted({"copy", "weakref", "datetime"} & set(sys.modules))
import dataclasses
copy_stand_in = type(dataclasses.copy).__name__

@dataclasses.dataclass
class Box:
    items: list
    when: object = None

box = Box([1, [2]])
as_dict = dataclasses.asdict(box)
import copy
import datetime, _datetime
moment = datetime.datetime(2026, 12, 7, 1, 2, 3, tzinfo=datetime.timezone.utc)
import orjson
print(json.dumps({"after_orjson": after_orjson, "copy_stand_in": copy_stand_in, "copied": as_dict["items"] is not box.items
                  and as_dict == {"items": [1, [2]], "when": None}, "copy_handed": dataclasses.copy is copy,
                  "datetime_real": hasattr(datetime, "__file__") and datetime.datetime is _datetime.datetime,
                  "orjson_datetime": orjson.dumps(moment).decode(), "wire": json_wire.encode({"n": 1}).decode()}))
"""


def test_orjson_is_imported_without_copy_and_datetime_and_both_work_as_before():
    """`dataclasses`' `copy` is the real one from its first use (`asdict`); orjson gets `_datetime`'s C API from
    the `datetime` stand-in, serialises datetimes as before, and any later `import datetime` is the real module."""
    proc = subprocess.run([sys.executable, "-c", _COPY_AND_DATETIME_CHILD], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    seen = json.loads(proc.stdout)
    checked = (3, 11) <= sys.version_info < (3, 14)
    assert seen["after_orjson"] == ([] if checked else ["copy", "datetime", "weakref"])
    assert seen["copy_stand_in"] == ("_CopyStandIn" if checked else "module")
    assert seen["copied"] and seen["copy_handed"] and seen["datetime_real"]
    assert seen["orjson_datetime"] == '"2026-12-07T01:02:03+00:00"' and seen["wire"] == '{"n":1}'
