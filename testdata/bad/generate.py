#!/usr/bin/env python3
"""Writes lakescan's bad-input corpus: `testdata/bad/**`, `cases.tsv` and `README.md`.

Pure Python 3.11 standard library. Run from anywhere: `python3 testdata/bad/generate.py`.
The output is deterministic (no clocks, no random numbers): running it twice gives the
same bytes, so `git diff` after a run shows only what a change to this script changed.

Where the bytes come from:

* Parquet files are written by hand here (`ParquetWriter`: the Thrift compact protocol,
  PLAIN and dictionary pages, no compression), then corrupted by byte edits at offsets the
  writer reports (footer, page headers, dictionary pages, column-chunk offsets, schema).
* Avro manifests, manifest lists and metadata JSON are decoded from files of
  `testdata/duckdb-iceberg/data/persistent/equality_deletes/` (MIT, see that folder's
  LICENSE), edited, and encoded again (`avro_read` / `avro_write`), or byte-edited.
* Puffin files and deletion vectors come from `testdata/deletion-vectors/` (Apache-2.0),
  re-framed or edited with their length and CRC recomputed where the case is about
  something else.

Each case is registered with `case(...)`: its path, kind, the error text expected (a
regular expression), how the test sets it up, its base file and the problem it shows.
`crates/lakescan/tests/bad_input_corpus.rs` runs every row of `cases.tsv`.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import struct
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTDATA = HERE.parent
DUCKDB = TESTDATA / "duckdb-iceberg" / "data" / "persistent"
EQ_TABLE = DUCKDB / "equality_deletes" / "warehouse" / "mydb" / "mytable" / "metadata"
BASE_MANIFEST = EQ_TABLE / "bcc5469e-83b4-4a41-be7e-af79ed029353-m0.avro"
BASE_LIST = EQ_TABLE / "snap-853766660775201079-1-bcc5469e-83b4-4a41-be7e-af79ed029353.avro"
BASE_METADATA = EQ_TABLE / "v2.metadata.json"
BARE_DV = next((DUCKDB / "legacy_bare_deletion_vector").rglob("*.puffin"))
DV = TESTDATA / "deletion-vectors"
JAVA_PUFFIN = DV / "iceberg-go-dv/table/dv/testdata/deletes/single-blob-dv.puffin"
JAVA_BLOBS = DV / "iceberg-core-dv-golden" / "deletes"

# ---------------------------------------------------------------------------------------
# The case registry
# ---------------------------------------------------------------------------------------


@dataclass
class Case:
    path: str  # relative to testdata/bad
    kind: str
    expected: str  # regex the error must match (besides naming the file)
    setup: str  # `key=value;…` for the test (see README)
    base: str  # where the bytes come from
    problem: str  # what is wrong, in words
    names: str = ""  # the name the error must contain, when not the placed file's


CASES: list[Case] = []
WRITTEN: dict[str, bytes] = {}


def rel(path: Path) -> str:
    return str(path.relative_to(TESTDATA))


def case(path, kind, expected, base, problem, setup="", names="", data=None):
    """Registers a case; `data` (bytes) is written to `path` when given."""
    if data is not None:
        write(path, data)
    CASES.append(Case(path, kind, expected, setup, base, problem, names))


def write(path: str, data: bytes) -> None:
    if path in WRITTEN:
        raise SystemExit(f"{path} written twice")
    WRITTEN[path] = data


# ---------------------------------------------------------------------------------------
# Thrift compact protocol (what Parquet footers and page headers are written in)
# ---------------------------------------------------------------------------------------

T_TRUE, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST = 1, 2, 3, 4, 5, 6, 7, 8, 9
T_STRUCT = 12


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n: int) -> bytes:
    return varint((n << 1) ^ (n >> 63))


class F:
    """A Thrift field value: its compact type and its encoding."""

    def __init__(self, ttype: int, data: bytes):
        self.ttype, self.data = ttype, data


def i32(v: int) -> F:
    return F(T_I32, zigzag(v))


def i64(v: int) -> F:
    return F(T_I64, zigzag(v))


def binary(v: bytes | str) -> F:
    if isinstance(v, str):
        v = v.encode()
    return F(T_BINARY, varint(len(v)) + v)


def boolean(v: bool) -> F:
    return F(T_TRUE if v else T_FALSE, b"")


def lst(elem_type: int, items: list[F]) -> F:
    n = len(items)
    head = bytes([(n << 4) | elem_type]) if n < 15 else bytes([0xF0 | elem_type]) + varint(n)
    return F(T_LIST, head + b"".join(i.data for i in items))


def struct_(fields: dict[int, F | None]) -> F:
    """A struct of `{field id: value}`; `None` values are left out."""
    out = bytearray()
    last = 0
    for fid in sorted(fields):
        v = fields[fid]
        if v is None:
            continue
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | v.ttype)
        else:
            out.append(v.ttype)
            out += zigzag(fid)[:]  # i16 field id, zigzag varint
        out += v.data
        last = fid
    out.append(0)
    return F(T_STRUCT, bytes(out))


# ---------------------------------------------------------------------------------------
# A small Parquet writer
# ---------------------------------------------------------------------------------------

# Physical types.
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED = 0, 1, 2, 3, 4, 5, 6, 7
REQUIRED, OPTIONAL, REPEATED = 0, 1, 2
# Converted types.
UTF8, DATE, TIMESTAMP_MILLIS, DECIMAL = 0, 6, 9, 5
# Encodings.
PLAIN, PLAIN_DICTIONARY, RLE, BIT_PACKED, RLE_DICTIONARY = 0, 2, 3, 4, 8
# Page types.
DATA_PAGE, DICTIONARY_PAGE = 0, 2


@dataclass
class Column:
    name: str
    ptype: int
    values: list
    repetition: int = OPTIONAL
    converted: int | None = None
    field_id: int | None = None
    dictionary: bool = False
    type_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    # Overrides of what the footer says (for corruptions).
    meta_ptype: int | None = None


@dataclass
class ChunkLayout:
    """Where one column chunk's parts are in the file."""

    start: int = 0
    dict_header: int | None = None  # offset of the dictionary page header
    dict_body: int | None = None
    data_header: int = 0
    data_body: int = 0
    end: int = 0


@dataclass
class Layout:
    chunks: list[ChunkLayout] = field(default_factory=list)
    footer_start: int = 0
    footer_len: int = 0


def plain(ptype: int, values: list, type_length: int | None = None) -> bytes:
    if ptype == INT32:
        return b"".join(struct.pack("<i", v) for v in values)
    if ptype == INT64:
        return b"".join(struct.pack("<q", v) for v in values)
    if ptype == FLOAT:
        return b"".join(struct.pack("<f", v) for v in values)
    if ptype == DOUBLE:
        return b"".join(struct.pack("<d", v) for v in values)
    if ptype == BYTE_ARRAY:
        out = b""
        for v in values:
            b = v.encode() if isinstance(v, str) else v
            out += struct.pack("<I", len(b)) + b
        return out
    if ptype == FIXED:
        return b"".join(values)
    if ptype == INT96:
        return b"".join(struct.pack("<qi", v, 2440588) for v in values)
    if ptype == BOOLEAN:
        return bit_pack([1 if v else 0 for v in values], 1)
    raise ValueError(ptype)


def bit_pack(values: list[int], width: int) -> bytes:
    """Values bit-packed LSB first, padded to a multiple of 8 values."""
    values = values + [0] * (-len(values) % 8)
    bits = 0
    for i, v in enumerate(values):
        bits |= v << (i * width)
    return bits.to_bytes(len(values) * width // 8, "little") if values else b""


def hybrid(values: list[int], width: int) -> bytes:
    """The RLE / bit-packing hybrid, as one bit-packed run."""
    groups = (len(values) + 7) // 8
    return varint((groups << 1) | 1) + bit_pack(values, width)


def page_header(ptype: int, size: int, body: F, num_values_field: int) -> bytes:
    return struct_({1: i32(ptype), 2: i32(size), 3: i32(size), num_values_field: body}).data


class ParquetWriter:
    """One row group of `columns`; `write()` returns the file and where its parts are."""

    def __init__(self, columns: list[Column], rows: int | None = None):
        self.columns = columns
        self.rows = rows if rows is not None else len(columns[0].values)
        self.created_by = "lakescan testdata/bad/generate.py"
        # Hooks that corrupt the footer's Thrift structures before they are encoded.
        self.schema_hook = None
        self.chunk_hook = None
        self.row_group_hook = None
        self.file_hook = None

    def column_pages(self, c: Column, offset: int, layout: ChunkLayout) -> bytes:
        out = b""
        present = [v for v in c.values if v is not None]
        levels = b""
        if c.repetition == REPEATED:
            reps = hybrid([0] * len(c.values), 1)
            levels = struct.pack("<I", len(reps)) + reps
        if c.repetition in (OPTIONAL, REPEATED):
            defs = hybrid([0 if v is None else 1 for v in c.values], 1)
            levels += struct.pack("<I", len(defs)) + defs
        if c.dictionary:
            uniq = list(dict.fromkeys(present))
            body = plain(c.ptype, uniq, c.type_length)
            header = page_header(
                DICTIONARY_PAGE, len(body), struct_({1: i32(len(uniq)), 2: i32(PLAIN)}), 7
            )
            layout.dict_header = offset
            layout.dict_body = offset + len(header)
            out += header + body
            width = max(1, (len(uniq) - 1).bit_length())
            values = bytes([width]) + hybrid([uniq.index(v) for v in present], width)
            encoding = RLE_DICTIONARY
        else:
            values = plain(c.ptype, present, c.type_length)
            encoding = PLAIN
        body = levels + values
        dph = struct_({1: i32(len(c.values)), 2: i32(encoding), 3: i32(RLE), 4: i32(RLE)})
        header = page_header(DATA_PAGE, len(body), dph, 5)
        layout.data_header = offset + len(out)
        layout.data_body = layout.data_header + len(header)
        out += header + body
        return out

    def schema_elements(self) -> list[dict]:
        root = {4: binary("schema"), 5: i32(len(self.columns))}
        out = [root]
        for c in self.columns:
            e = {
                1: i32(c.meta_ptype if c.meta_ptype is not None else c.ptype),
                2: i32(c.type_length) if c.type_length is not None else None,
                3: i32(c.repetition),
                4: binary(c.name),
                6: i32(c.converted) if c.converted is not None else None,
                7: i32(c.scale) if c.scale is not None else None,
                8: i32(c.precision) if c.precision is not None else None,
                9: i32(c.field_id) if c.field_id is not None else None,
            }
            out.append(e)
        return out

    def write(self) -> tuple[bytes, Layout]:
        layout = Layout()
        out = bytearray(b"PAR1")
        chunks = []
        for c in self.columns:
            cl = ChunkLayout(start=len(out))
            pages = self.column_pages(c, len(out), cl)
            out += pages
            cl.end = len(out)
            layout.chunks.append(cl)
            encodings = [PLAIN, RLE] + ([RLE_DICTIONARY] if c.dictionary else [])
            meta = {
                1: i32(c.meta_ptype if c.meta_ptype is not None else c.ptype),
                2: lst(T_I32, [i32(e) for e in encodings]),
                3: lst(T_BINARY, [binary(c.name)]),
                4: i32(0),
                5: i64(len(c.values)),
                6: i64(len(pages)),
                7: i64(len(pages)),
                9: i64(cl.data_header),
                11: i64(cl.dict_header) if cl.dict_header is not None else None,
            }
            chunk = {2: i64(cl.start), 3: None}
            if self.chunk_hook:
                self.chunk_hook(len(chunks), chunk, meta)
            chunk[3] = struct_(meta)
            chunks.append(chunk)
        row_group = {
            1: lst(T_STRUCT, [struct_(ch) for ch in chunks]),
            2: i64(sum(cl.end - cl.start for cl in layout.chunks)),
            3: i64(self.rows),
        }
        if self.row_group_hook:
            self.row_group_hook(row_group)
        elements = self.schema_elements()
        if self.schema_hook:
            self.schema_hook(elements)
        file_meta = {
            1: i32(1),
            2: lst(T_STRUCT, [struct_(e) for e in elements]),
            3: i64(self.rows),
            4: lst(T_STRUCT, [struct_(row_group)]),
            6: binary(self.created_by),
        }
        if self.file_hook:
            self.file_hook(file_meta)
        footer = struct_(file_meta).data
        layout.footer_start = len(out)
        layout.footer_len = len(footer)
        out += footer + struct.pack("<I", len(footer)) + b"PAR1"
        return bytes(out), layout


def good_columns() -> list[Column]:
    """The corpus's good table: `id BIGINT` (required, plain), `name VARCHAR` (dictionary)."""
    return [
        Column("id", INT64, [1, 2, 3], repetition=REQUIRED),
        Column("name", BYTE_ARRAY, ["a", "b", "a"], converted=UTF8, dictionary=True),
    ]


def good_parquet(**hooks) -> tuple[bytes, Layout]:
    w = ParquetWriter(good_columns())
    for k, v in hooks.items():
        setattr(w, k, v)
    return w.write()


def edit(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


# ---------------------------------------------------------------------------------------
# Avro object container files
# ---------------------------------------------------------------------------------------

AVRO_MAGIC = b"Obj\x01"


def read_long(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (n >> 1) ^ -(n & 1), pos


def avro_long(n: int) -> bytes:
    return zigzag(n)


def avro_bytes(b: bytes) -> bytes:
    return avro_long(len(b)) + b


@dataclass
class AvroFile:
    meta: dict[str, bytes]
    sync: bytes
    records: list


class AvroCodec:
    """Decodes and encodes values of one Avro schema (the subset manifests use)."""

    def __init__(self, schema):
        self.named: dict[str, object] = {}
        self.schema = schema

    def decode(self, s, buf: bytes, pos: int):
        if isinstance(s, str):
            if s == "null":
                return None, pos
            if s == "boolean":
                return buf[pos] != 0, pos + 1
            if s in ("int", "long"):
                return read_long(buf, pos)
            if s == "float":
                return struct.unpack_from("<f", buf, pos)[0], pos + 4
            if s == "double":
                return struct.unpack_from("<d", buf, pos)[0], pos + 8
            if s in ("bytes", "string"):
                n, pos = read_long(buf, pos)
                b = bytes(buf[pos:pos + n])
                return (b.decode() if s == "string" else b), pos + n
            return self.decode(self.named[s], buf, pos)
        if isinstance(s, list):
            i, pos = read_long(buf, pos)
            v, pos = self.decode(s[i], buf, pos)
            return (i, v), pos
        t = s["type"]
        if t == "record":
            self.named[s["name"]] = s
            out = {}
            for f in s["fields"]:
                out[f["name"]], pos = self.decode(f["type"], buf, pos)
            return out, pos
        if t in ("array", "map"):
            out = []
            while True:
                n, pos = read_long(buf, pos)
                if n == 0:
                    return out, pos
                if n < 0:
                    n = -n
                    _, pos = read_long(buf, pos)
                for _ in range(n):
                    if t == "map":
                        k, pos = self.decode("string", buf, pos)
                        v, pos = self.decode(s["values"], buf, pos)
                        out.append((k, v))
                    else:
                        v, pos = self.decode(s["items"], buf, pos)
                        out.append(v)
        if t == "fixed":
            self.named[s["name"]] = s
            return bytes(buf[pos:pos + s["size"]]), pos + s["size"]
        if t == "enum":
            i, pos = read_long(buf, pos)
            return s["symbols"][i], pos
        return self.decode(t, buf, pos)

    def encode(self, s, v) -> bytes:
        if isinstance(s, str):
            if s == "null":
                return b""
            if s == "boolean":
                return b"\x01" if v else b"\x00"
            if s in ("int", "long"):
                return avro_long(v)
            if s == "float":
                return struct.pack("<f", v)
            if s == "double":
                return struct.pack("<d", v)
            if s == "string":
                return avro_bytes(v.encode())
            if s == "bytes":
                return avro_bytes(v)
            return self.encode(self.named[s], v)
        if isinstance(s, list):
            i, inner = v
            return avro_long(i) + self.encode(s[i], inner)
        t = s["type"]
        if t == "record":
            self.named[s["name"]] = s
            return b"".join(self.encode(f["type"], v[f["name"]]) for f in s["fields"])
        if t == "array":
            body = b"".join(self.encode(s["items"], x) for x in v)
            return (avro_long(len(v)) + body if v else b"") + b"\x00"
        if t == "map":
            body = b"".join(self.encode("string", k) + self.encode(s["values"], x) for k, x in v)
            return (avro_long(len(v)) + body if v else b"") + b"\x00"
        if t == "fixed":
            self.named[s["name"]] = s
            return v
        if t == "enum":
            return avro_long(s["symbols"].index(v))
        return self.encode(t, v)


def avro_read(path: Path) -> AvroFile:
    data = path.read_bytes()
    assert data[:4] == AVRO_MAGIC, path
    pos, meta = 4, {}
    while True:
        n, pos = read_long(data, pos)
        if n == 0:
            break
        if n < 0:
            n = -n
            _, pos = read_long(data, pos)
        for _ in range(n):
            k, pos = AvroCodec(None).decode("string", data, pos)
            v, pos = AvroCodec(None).decode("bytes", data, pos)
            meta[k] = v
    sync = data[pos:pos + 16]
    pos += 16
    schema = json.loads(meta["avro.schema"])
    codec = AvroCodec(schema)
    records = []
    while pos < len(data):
        n, pos = read_long(data, pos)
        size, pos = read_long(data, pos)
        block = data[pos:pos + size]
        pos += size + 16
        if meta.get("avro.codec", b"null") == b"deflate":
            block = zlib.decompress(block, -15)
        at = 0
        for _ in range(n):
            r, at = codec.decode(schema, block, at)
            records.append(r)
    return AvroFile(meta, sync, records)


def deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def avro_write(f: AvroFile, records=None, raw_block: bytes | None = None) -> bytes:
    """The container of `f.meta` and `records` (default: `f.records`) in one block."""
    records = f.records if records is None else records
    out = bytearray(AVRO_MAGIC)
    out += avro_long(len(f.meta))
    for k, v in f.meta.items():
        out += avro_bytes(k.encode()) + avro_bytes(v)
    out += b"\x00" + f.sync
    if raw_block is None:
        codec = AvroCodec(json.loads(f.meta["avro.schema"]))
        raw_block = b"".join(codec.encode(codec.schema, r) for r in records)
        if f.meta.get("avro.codec", b"null") == b"deflate":
            raw_block = deflate(raw_block)
    out += avro_long(len(records)) + avro_long(len(raw_block)) + raw_block + f.sync
    return bytes(out)


def header_end(data: bytes) -> int:
    """Offset of the first data block of a container (after the sync marker)."""
    pos = 4
    while True:
        n, pos = read_long(data, pos)
        if n == 0:
            return pos + 16
        if n < 0:
            n = -n
            _, pos = read_long(data, pos)
        for _ in range(2 * n):
            k, pos = read_long(data, pos)
            pos += k


def copy_avro(f: AvroFile) -> AvroFile:
    records = json.loads(json.dumps(f.records, default=_bytes_json), object_hook=_json_bytes)
    return AvroFile(dict(f.meta), f.sync, records)


def _bytes_json(o):
    if isinstance(o, bytes):
        return {"__bytes__": o.hex()}
    raise TypeError(o)


def _json_bytes(d):
    if set(d) == {"__bytes__"}:
        return bytes.fromhex(d["__bytes__"])
    return d


def with_avro_schema(f: AvroFile, change) -> AvroFile:
    """`f` with its Avro schema changed by `change(schema)` (records re-encoded with it)."""
    g = copy_avro(f)
    schema = json.loads(g.meta["avro.schema"])
    change(schema)
    g.meta["avro.schema"] = json.dumps(schema).encode()
    return g


# ---------------------------------------------------------------------------------------
# Deletion vectors and Puffin
# ---------------------------------------------------------------------------------------

DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])


def dv_blob(bitmap: bytes, magic: bytes = DV_MAGIC) -> bytes:
    """A deletion-vector-v1 blob: BE length, magic, bitmap, BE CRC-32 of magic + bitmap."""
    body = magic + bitmap
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def roaring32(values: list[int]) -> bytes:
    """A portable 32-bit Roaring bitmap of one array container (values < 65536)."""
    values = sorted(values)
    out = struct.pack("<II", 12346, 1)  # cookie (no runs), one container
    out += struct.pack("<HH", 0, len(values) - 1)  # key 0, cardinality - 1
    out += struct.pack("<I", 8 + 4 + 4)  # offset of the container
    out += b"".join(struct.pack("<H", v) for v in values)
    return out


def treemap(bitmaps: list[tuple[int, bytes]]) -> bytes:
    return struct.pack("<Q", len(bitmaps)) + b"".join(struct.pack("<I", k) + b for k, b in bitmaps)


def puffin(blob: bytes, footer: dict, flags: bytes = b"\0\0\0\0") -> bytes:
    """A Puffin file of one blob at offset 4 and `footer` (JSON)."""
    payload = json.dumps(footer, separators=(",", ":")).encode()
    return b"PFA1" + blob + b"PFA1" + payload + struct.pack("<I", len(payload)) + flags + b"PFA1"


def dv_footer(length: int, cardinality: int, **blob_overrides) -> dict:
    blob = {
        "type": "deletion-vector-v1",
        "fields": [2147483645],
        "snapshot-id": -1,
        "sequence-number": -1,
        "offset": 4,
        "length": length,
        "properties": {"cardinality": str(cardinality)},
    }
    blob.update(blob_overrides)
    return {"blobs": [blob], "properties": {"created-by": "lakescan testdata/bad/generate.py"}}


# ---------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------

NAMES_FOOTER = r"cannot read the footer \(file metadata\) of Parquet file"
PAGES = r"cannot read Parquet file '.*': .* \(the file is corrupt: its pages do not decode\)"


def pages(what: str) -> str:
    """The error of a page that does not decode, saying `what`."""
    return what + r".*\(the file is corrupt: its pages do not decode\)"


def outside(column: str, offset: str, size: str) -> str:
    """The error of a column chunk whose bytes lie outside the file."""
    return (
        rf"the footer's column chunk '{column}' of row group 0 lies at offset {offset} with "
        rf"{size} bytes .*outside the file's \d+ bytes \(the footer is corrupt\)"
    )


def parquet_cases() -> None:
    good, lay = good_parquet()
    write("good/good.parquet", good)
    base = "good/good.parquet (written by generate.py)"
    d = "parquet/"
    c0 = lay.chunks[0]  # id: one PLAIN data page
    c1 = lay.chunks[1]  # name: dictionary page + RLE_DICTIONARY data page
    n = len(good)

    def hooked(**hooks) -> bytes:
        return good_parquet(**hooks)[0]

    # --- the file as a whole and its footer -------------------------------------------
    # (A zero-byte file is no bad input: Hive tables read it as an empty file.)
    case(
        d + "not_parquet.parquet",
        "parquet",
        NAMES_FOOTER + r".*(Corrupt footer|Invalid Parquet file)",
        "text",
        "a text file with a .parquet name",
        data=b"id,name\n1,a\n2,b\n",
    )
    case(d + "magic_only.parquet", "parquet", NAMES_FOOTER, "text",
         "only the magic bytes PAR1PAR1", data=b"PAR1PAR1")
    case(d + "truncated_half.parquet", "parquet", NAMES_FOOTER, base,
         "the first half of the good file", data=good[: n // 2])
    case(d + "truncated_last_byte.parquet", "parquet", NAMES_FOOTER, base,
         "the good file without its last byte", data=good[:-1])
    case(d + "truncated_footer.parquet", "parquet", NAMES_FOOTER, base,
         "the good file cut inside its footer, the magic and length re-appended",
         data=good[: lay.footer_start + lay.footer_len // 2] + good[-8:])
    case(d + "tail_magic.parquet", "parquet", NAMES_FOOTER + r".*Corrupt footer", base,
         "the trailing magic PAR1 overwritten with XXXX", data=good[:-4] + b"XXXX")
    case(
        d + "footer_length_huge.parquet",
        "parquet",
        NAMES_FOOTER + r".*less than footer \+ metadata",
        base,
        "the footer length says 2^31-1 bytes",
        data=edit(good, n - 8, b"\xff\xff\xff\x7f"),
    )
    case(d + "footer_length_zero.parquet", "parquet", NAMES_FOOTER, base,
         "the footer length says 0 bytes", data=edit(good, n - 8, b"\0\0\0\0"))
    case(d + "footer_length_short.parquet", "parquet", NAMES_FOOTER, base,
         "the footer length 10 bytes short: the metadata is read from its middle",
         data=edit(good, n - 8, struct.pack("<I", lay.footer_len - 10)))
    case(d + "footer_garbage.parquet", "parquet", NAMES_FOOTER, base,
         "the first 32 bytes of the footer overwritten with 0xFF",
         data=edit(good, lay.footer_start, b"\xff" * 32))
    case(d + "footer_zeros.parquet", "parquet", NAMES_FOOTER, base,
         "the whole footer overwritten with zero bytes (a struct that ends at once: no schema)",
         data=edit(good, lay.footer_start, b"\0" * lay.footer_len))

    # --- the schema --------------------------------------------------------------------
    def set_schema(i, fid, v):
        def hook(elements):
            elements[i][fid] = v
        return hook

    case(d + "schema_too_many_children.parquet", "parquet", NAMES_FOOTER, base,
         "the root schema element claims 5 children; 2 follow",
         data=hooked(schema_hook=set_schema(0, 5, i32(5))))
    case(d + "schema_negative_children.parquet", "parquet", NAMES_FOOTER, base,
         "the root schema element claims -1 children",
         data=hooked(schema_hook=set_schema(0, 5, i32(-1))))
    case(d + "schema_unknown_type.parquet", "parquet", NAMES_FOOTER, base,
         "column id has physical type 99",
         data=hooked(schema_hook=set_schema(1, 1, i32(99))))
    case(d + "schema_unknown_repetition.parquet", "parquet", NAMES_FOOTER, base,
         "column id has repetition type 7",
         data=hooked(schema_hook=set_schema(1, 3, i32(7))))
    case(d + "schema_date_on_int64.parquet", "parquet", NAMES_FOOTER, base,
         "column id (INT64) annotated DATE, which only annotates INT32",
         data=hooked(schema_hook=set_schema(1, 6, i32(DATE))))
    case(d + "schema_utf8_on_int64.parquet", "parquet", NAMES_FOOTER, base,
         "column id (INT64) annotated UTF8, which only annotates BYTE_ARRAY",
         data=hooked(schema_hook=set_schema(1, 6, i32(UTF8))))
    case(d + "schema_decimal_scale_above_precision.parquet", "parquet", NAMES_FOOTER, base,
         "column id (INT64) annotated DECIMAL(2, 5): scale above precision",
         data=hooked(schema_hook=lambda e: e[1].update({6: i32(DECIMAL), 7: i32(5), 8: i32(2)})))
    case(d + "schema_fixed_without_length.parquet", "parquet", NAMES_FOOTER, base,
         "column name is FIXED_LEN_BYTE_ARRAY without a type_length",
         data=hooked(schema_hook=lambda e: e[2].update({1: i32(FIXED), 6: None})))
    case(d + "schema_fewer_columns_than_chunks.parquet", "parquet", NAMES_FOOTER, base,
         "the schema lists one column; the row group has two column chunks",
         data=hooked(schema_hook=lambda e: (e.pop(), e[0].update({5: i32(1)}))))

    # --- row groups and column chunks --------------------------------------------------
    def chunk(i, fid, v, where="meta"):
        def hook(idx, ch, meta):
            if idx == i:
                (meta if where == "meta" else ch)[fid] = v
        return hook

    case(
        d + "chunk_data_offset_past_end.parquet",
        "parquet",
        outside("id", r"1048576", r"41"),
        base,
        "the id chunk's data_page_offset points 1 MB past the end of the file",
        data=hooked(chunk_hook=chunk(0, 9, i64(1 << 20))),
    )
    case(d + "chunk_data_offset_negative.parquet", "parquet", outside("id", r"-100", r"41"), base,
         "the id chunk's data_page_offset is -100",
         data=hooked(chunk_hook=chunk(0, 9, i64(-100))))
    case(
        d + "chunk_dictionary_offset_past_end.parquet",
        "parquet",
        outside("name", r"\d+", r"49"),
        base,
        "the name chunk's dictionary_page_offset points past the end of the file",
        data=hooked(chunk_hook=chunk(1, 11, i64(n + 1000))),
    )
    case(d + "chunk_size_past_end.parquet", "parquet", outside("id", r"4", r"1048576"), base,
         "the id chunk's total_compressed_size runs 1 MB past the end of the file",
         data=hooked(chunk_hook=chunk(0, 7, i64(1 << 20))))
    case(d + "chunk_size_negative.parquet", "parquet", outside("name", r"\d+", r"-1"), base,
         "the name chunk's total_compressed_size is -1",
         data=hooked(chunk_hook=chunk(1, 7, i64(-1))))
    case(
        d + "chunk_codec_unknown.parquet",
        "parquet",
        NAMES_FOOTER + r" '.*': Parquet error: Unexpected CompressionCodec 42",
        base,
        "the id chunk's codec is 42 (no such codec)",
        data=hooked(chunk_hook=chunk(0, 4, i32(42))),
    )
    case(
        d + "chunk_codec_snappy_on_plain.parquet",
        "parquet",
        pages(r"snappy: corrupt input"),
        base,
        "the id chunk says SNAPPY; its pages are stored uncompressed",
        data=hooked(chunk_hook=chunk(0, 4, i32(1))),
        setup="queries=select",
    )
    case(
        d + "chunk_external_file.parquet",
        "parquet",
        r"column chunk 'id' of row group 0 keeps its data in another file \('other\.parquet'\)",
        base,
        "the id chunk says its data is in another file ('other.parquet')",
        data=hooked(chunk_hook=chunk(0, 1, binary("other.parquet"), where="chunk")),
    )
    case(
        d + "row_group_no_columns.parquet",
        "parquet",
        r"Column count mismatch\. Schema has 2 columns while Row Group has 0",
        base,
        "the row group has no column chunks (the schema has two columns)",
        data=hooked(row_group_hook=lambda rg: rg.update({1: lst(T_STRUCT, [])})),
    )
    case(d + "row_group_more_rows.parquet", "parquet", r"row group 0 .*5 rows", base,
         "the row group and file say 5 rows; the pages hold 3",
         data=hooked(row_group_hook=lambda rg: rg.update({3: i64(5)}),
                     file_hook=lambda fm: fm.update({3: i64(5)})),
         setup="queries=select")

    # --- pages ---------------------------------------------------------------------------
    sel = "queries=select"
    case(d + "page_header_garbage.parquet", "parquet", PAGES, base,
         "the id data page header overwritten with 0xFF",
         data=edit(good, c0.data_header, b"\xff" * (c0.data_body - c0.data_header)), setup=sel)
    case(d + "page_header_zeros.parquet", "parquet", PAGES, base,
         "the id data page header overwritten with zero bytes",
         data=edit(good, c0.data_header, b"\0" * (c0.data_body - c0.data_header)), setup=sel)
    case(d + "page_type_unknown.parquet", "parquet", pages(r"Unexpected PageType 7"), base,
         "the id data page's type is 7 (no such page type)",
         data=id_page(page_type=7), setup=sel)
    case(d + "page_type_index.parquet", "parquet", PAGES, base,
         "the id chunk's only page is an INDEX_PAGE (type 1): the chunk has no data page",
         data=id_page(page_type=1), setup=sel)
    case(
        d + "page_size_past_chunk.parquet",
        "parquet",
        pages(r"Invalid page header"),
        base,
        "the id data page's compressed_page_size says 10000 bytes; 24 follow the header",
        data=id_page(size=10000),
        setup=sel,
    )
    case(d + "page_size_negative.parquet", "parquet", pages(r"Invalid page header"), base,
         "the id data page's compressed_page_size is -5",
         data=id_page(size=-5), setup=sel)
    case(d + "page_values_more_than_stored.parquet", "parquet", PAGES, base,
         "the id data page says 9 values (num_values); its body holds 3",
         data=id_page(num_values=9), setup=sel)
    case(d + "page_values_negative.parquet", "parquet", PAGES, base,
         "the id data page says -3 values (num_values)",
         data=id_page(num_values=-3), setup=sel)
    case(d + "page_encoding_unknown.parquet", "parquet", pages(r"Unexpected Encoding 42"), base,
         "the id data page's encoding is 42 (no such encoding)",
         data=id_page(encoding=42), setup=sel)
    case(
        d + "page_encoding_bit_packed.parquet",
        "parquet",
        r"Encoding BIT_PACKED is not supported",
        base,
        "the id data page's values say BIT_PACKED, which is only for levels",
        data=id_page(encoding=BIT_PACKED),
        setup=sel,
    )
    case(d + "page_body_truncated.parquet", "parquet", PAGES, base,
         "the id data page's body cut to 4 of its 24 bytes (the rest of the file follows)",
         data=good[:c0.data_body + 4] + good[c0.end:], setup=sel)
    # --- dictionaries ---------------------------------------------------------------------
    case(d + "dictionary_header_garbage.parquet", "parquet", PAGES, base,
         "the name dictionary page header overwritten with 0xFF",
         data=edit(good, c1.dict_header, b"\xff" * (c1.dict_body - c1.dict_header)), setup=sel)
    case(
        d + "dictionary_values_more_than_stored.parquet",
        "parquet",
        pages(r"eof decoding byte array"),
        base,
        "the name dictionary page says 100 entries; it holds 2",
        data=dictionary_count(100),
        setup=sel,
    )
    case(
        d + "dictionary_index_out_of_range.parquet",
        "parquet",
        pages(r"invalid key=7 for dictionary"),
        base,
        "a name data page index (7) beyond the 2-entry dictionary",
        data=dictionary_index(7),
        setup=sel,
    )
    case(
        d + "dictionary_bit_width_huge.parquet",
        "parquet",
        pages(r"the Parquet decoder panicked: .*num_bits"),
        base,
        "the name data page's dictionary-index bit width is 60 (at most 32)",
        # The bit width byte follows the definition levels (a 4-byte length, then them).
        data=edit(good, c1.data_body + 4 + struct.unpack_from("<I", good, c1.data_body)[0], b"<"),
        setup=sel,
    )
    case(
        d + "dictionary_missing.parquet",
        "parquet",
        pages(r"dictionary required for dictionary encoding"),
        base,
        "the name chunk's data page is dictionary-encoded; the chunk has no dictionary page",
        data=no_dictionary(),
        setup=sel,
    )
    case(
        d + "dictionary_string_length_past_page.parquet",
        "parquet",
        pages(r"eof decoding byte array"),
        base,
        "a string in the name dictionary says it is 1000 bytes long; the page has 10",
        data=edit(good, c1.dict_body, struct.pack("<I", 1000)),
        setup=sel,
    )
    case(
        d + "levels_length_past_page.parquet",
        "parquet",
        pages(r"not enough data to read levels"),
        base,
        "the name data page's definition-level length says 1000 bytes",
        data=edit(good, c1.data_body, struct.pack("<I", 1000)),
        setup=sel,
    )
    case(
        d + "levels_run_of_no_groups.parquet",
        "parquet",
        PAGES,
        base,
        "the name data page's definition levels are a bit-packed run of 0 groups (header 01) "
        "for 3 values",
        data=edit(good, c1.data_body + 4, b"\x01"),
        setup=sel,
    )

    # --- stored types the table cannot read -------------------------------------------
    def typed(columns: list[Column]) -> bytes:
        return ParquetWriter(columns).write()[0]

    name = Column("name", BYTE_ARRAY, ["a", "b", "a"], converted=UTF8)
    case(d + "type_id_double.parquet", "parquet",
         r"column 'id' is stored as Float64, which cannot be read as the table type Int64", base,
         "id stored as DOUBLE in a table of id BIGINT",
         data=typed([Column("id", DOUBLE, [1.0, 2.0, 3.0]), name]), setup=sel)
    case(d + "type_id_string.parquet", "parquet",
         r"column 'id' is stored as Utf8, which cannot be read as the table type Int64", base,
         "id stored as a UTF8 BYTE_ARRAY in a table of id BIGINT",
         data=typed([Column("id", BYTE_ARRAY, ["1", "2", "3"], converted=UTF8), name]), setup=sel)
    case(d + "type_id_boolean.parquet", "parquet",
         r"column 'id' is stored as Boolean, which cannot be read as the table type Int64", base,
         "id stored as BOOLEAN in a table of id BIGINT",
         data=typed([Column("id", BOOLEAN, [True, False, True]), name]), setup=sel)
    case(
        d + "type_id_int96.parquet",
        "parquet",
        r"column 'id' is stored as Timestamp\(.*\), which cannot be read as the table type Int64",
        base,
        "id stored as INT96 (a legacy timestamp) in a table of id BIGINT",
        data=typed([Column("id", INT96, [1, 2, 3]), name]),
        setup=sel,
    )
    case(d + "type_name_int64.parquet", "parquet",
         r"column 'name' is stored as Int64, which cannot be read as the table type Utf8", base,
         "name stored as INT64 in a table of name VARCHAR",
         data=typed([Column("id", INT64, [1, 2, 3]), Column("name", INT64, [7, 8, 9])]), setup=sel)
    case(d + "type_id_repeated.parquet", "parquet", r"column 'id' is stored as List", base,
         "id stored as a repeated INT64 (a legacy list) in a table of id BIGINT",
         data=typed([Column("id", INT64, [1, 2, 3], repetition=REPEATED), name]),
         setup="queries=select")


def id_page(page_type=DATA_PAGE, size=None, num_values=3, encoding=PLAIN) -> bytes:
    """The good file with the id data page's header rewritten (the footer's offsets follow)."""
    w = ParquetWriter(good_columns())
    orig = w.column_pages

    def pages(c, offset, layout):
        out = orig(c, offset, layout)
        if c.name != "id":
            return out
        body = out[layout.data_body - offset:]
        dph = struct_({1: i32(num_values), 2: i32(encoding), 3: i32(RLE), 4: i32(RLE)})
        n = len(body) if size is None else size
        header = struct_({1: i32(page_type), 2: i32(n), 3: i32(n), 5: dph}).data
        layout.data_body = layout.data_header + len(header)
        return header + body

    w.column_pages = pages
    return w.write()[0]


def dictionary_count(count: int) -> bytes:
    w = ParquetWriter(good_columns())
    orig = w.column_pages

    def pages(c, offset, layout):
        out = orig(c, offset, layout)
        if c.name != "name":
            return out
        dict_header_len = layout.dict_body - layout.dict_header
        rest = out[dict_header_len:]
        dict_body_len = layout.data_header - layout.dict_body
        dph = struct_({1: i32(count), 2: i32(PLAIN)})
        header = page_header(DICTIONARY_PAGE, dict_body_len, dph, 7)
        delta = len(header) - dict_header_len
        layout.dict_body += delta
        layout.data_header += delta
        layout.data_body += delta
        return header + rest

    w.column_pages = pages
    return w.write()[0]


def dictionary_index(index: int) -> bytes:
    """The good file with the name data page's second index set to `index` (width 3)."""
    w = ParquetWriter(good_columns())
    orig = w.column_pages

    def pages(c, offset, layout):
        out = orig(c, offset, layout)
        if c.name != "name":
            return out
        head = out[: layout.data_header - offset]
        defs = hybrid([1, 1, 1], 1)
        levels = struct.pack("<I", len(defs)) + defs
        body = levels + bytes([3]) + hybrid([0, index, 0], 3)
        dph = struct_({1: i32(3), 2: i32(RLE_DICTIONARY), 3: i32(RLE), 4: i32(RLE)})
        header = page_header(DATA_PAGE, len(body), dph, 5)
        layout.data_body = layout.data_header + len(header)
        return head + header + body

    w.column_pages = pages
    return w.write()[0]


def no_dictionary() -> bytes:
    """The name chunk without its dictionary page (its data page still says RLE_DICTIONARY)."""
    w = ParquetWriter(good_columns())
    orig = w.column_pages

    def pages(c, offset, layout):
        out = orig(c, offset, layout)
        if c.name != "name":
            return out
        cut = layout.data_header - offset
        shift = cut
        layout.dict_header = layout.dict_body = None
        layout.data_header -= shift
        layout.data_body -= shift
        return out[cut:]

    w.column_pages = pages
    return w.write()[0]


# ---------------------------------------------------------------------------------------
# Hive layouts
# ---------------------------------------------------------------------------------------


def hive_cases() -> None:
    good = WRITTEN["good/good.parquet"]
    base = "good/good.parquet in every data file"

    def layout(name: str, files: list[str], expected: str, problem: str, setup: str, names: str):
        for f in files:
            write(f"hive/{name}/{f}", good)
        case(f"hive/{name}", "hive", expected, base, problem, setup=setup, names=names)

    k_str = "columns=id BIGINT, name VARCHAR, k VARCHAR;partitioned_by=k"
    k_int = "columns=id BIGINT, name VARCHAR, k INT;partitioned_by=k"
    layout("key_empty", ["=v/f.parquet"], r"is not named 'k=<value>'",
           "a partition directory '=v': no key", k_str, "=v")
    layout("key_other", ["k=1/f.parquet", "other=2/f.parquet"], r"is not named 'k=<value>'",
           "a directory 'other=2' beside 'k=1' in a table partitioned by k", k_str, "other=2")
    layout("key_missing_equals", ["k=1/f.parquet", "plain/f.parquet"], r"is not named 'k=<value>'",
           "a directory 'plain' (no '=') beside 'k=1'", k_str, "plain")
    layout("key_unicode", ["ключ=1/f.parquet"], r"is not named 'k=<value>'",
           "a directory 'ключ=1' in a table partitioned by k", k_str, "ключ=1")
    layout("keys_swapped", ["b=1/a=2/f.parquet"], r"is not named 'a=<value>'",
           "directories b=…/a=… in a table partitioned by (a, b)",
           "columns=id BIGINT, name VARCHAR, a INT, b INT;partitioned_by=a, b", "b=1")
    layout("value_double_equals", ["k==1/f.parquet"],
           r"value '=1' of partition column 'k' is not a valid Int32",
           "a directory 'k==1': the value '=1' is not an INT", k_int, "k==1")
    layout("value_bad_escape", ["k=%ZZ/f.parquet"],
           r"value '%ZZ' of partition column 'k' is not a valid Int32",
           "a directory 'k=%ZZ': not an escape (Hive keeps it as text), not an INT", k_int, "k=%ZZ")
    layout("value_escape_not_utf8", ["k=%FF%FE/f.parquet"],
           r"is not valid UTF-8",
           "a directory 'k=%FF%FE': the escaped bytes are not UTF-8", k_str, "k=%FF%FE")
    layout("value_not_int", ["k=1/f.parquet", "k=abc/f.parquet"],
           r"value 'abc' of partition column 'k' is not a valid Int32",
           "a directory 'k=abc' in a table of k INT", k_int, "k=abc")
    layout("value_int_overflow", ["k=99999999999/f.parquet"],
           r"value '99999999999' of partition column 'k' is not a valid Int32",
           "a directory 'k=99999999999', beyond INT", k_int, "k=99999999999")
    layout("value_not_date", ["day=2024-13-45/f.parquet"],
           r"value '2024-13-45' of partition column 'day' is not a valid Date32",
           "a directory 'day=2024-13-45' in a table of day DATE",
           "columns=id BIGINT, name VARCHAR, day DATE;partitioned_by=day", "day=2024-13-45")
    layout("value_empty_int", ["k=/f.parquet"],
           r"value '' of partition column 'k' is not a valid Int32",
           "a directory 'k=' (an empty value) in a table of k INT", k_int, "k=")
    layout("mixed_file_at_root", ["f.parquet", "k=1/f.parquet"],
           r"is not in a partition directory: the table is partitioned by \(k\)",
           "a data file in the root of a table partitioned by k, beside 'k=1'", k_str, "f.parquet")
    layout(
        "mixed_depth",
        ["a=1/b=2/f.parquet", "a=2/f.parquet"],
        r"is not in a partition directory",
        "a=2 holds a data file where a 'b=…' directory is expected (table partitioned by a, b)",
        "columns=id BIGINT, name VARCHAR, a INT, b INT;partitioned_by=a, b",
        "a=2/f.parquet",
    )
    bucketed = "columns=id BIGINT, name VARCHAR;options=bucketed_by id, bucket_count 2"
    layout(
        "bucket_unnamed",
        ["000000_0.parquet", "data.parquet"],
        r"is not named like a bucket file",
        "a file 'data.parquet' in a table bucketed into 2",
        bucketed,
        "data.parquet",
    )
    layout("bucket_beyond_count", ["000000_0.parquet", "000005_0.parquet"],
           r"has no file for bucket 1 of its 6 buckets",
           "bucket files 0 and 5 in a table of 2 buckets (a bucket beyond the count, a gap)",
           bucketed, "000005_0.parquet")
    layout("bucket_number_huge", ["000000_0.parquet", "99999999_0.parquet"],
           r"has a file of bucket 99999999 \('.*'\), beyond the 1048576 buckets",
           "a bucket file numbered 99999999", bucketed, "99999999_0.parquet")
    layout(
        "bucket_count_incompatible",
        ["000000_0.parquet", "000001_0.parquet", "000002_0.parquet"],
        r"has 3 buckets, which neither divides nor is a multiple of the table's 2 buckets",
        "3 bucket files in a table of 2 buckets",
        bucketed,
        "000002_0.parquet",
    )
    layout(
        "bucket_partition_unnamed",
        ["ds=1/000000_0.parquet", "ds=1/part.parquet"],
        r"file '.*ds=1/part\.parquet' in partition 'ds=1' is not named like a bucket file",
        "a file 'part.parquet' in partition ds=1 of a bucketed table",
        "columns=id BIGINT, name VARCHAR, ds INT;partitioned_by=ds;"
        "options=bucketed_by id, bucket_count 2",
        "part.parquet",
    )


# ---------------------------------------------------------------------------------------
# Iceberg: manifests, manifest lists, metadata, Puffin, delete files
# ---------------------------------------------------------------------------------------


def manifest_cases() -> None:
    good = BASE_MANIFEST.read_bytes()
    m = avro_read(BASE_MANIFEST)
    base = rel(BASE_MANIFEST)
    d = "iceberg/manifest/"
    write("good/manifest.avro", good)
    hdr = header_end(good)

    def re_encoded(change=None, records=None) -> bytes:
        g = copy_avro(m)
        if change:
            change(g)
        return avro_write(g, records if records is not None else g.records)

    def entry(g):
        return g.records[0]

    def meta(key, value):
        def change(g):
            g.meta[key] = value
        return change

    def data_file(key, value):
        def change(g):
            entry(g)["data_file"][key] = value
        return change

    m_err = r"is not a valid Avro manifest"
    case(d + "not_avro.avro", "manifest", m_err, "text", "a text file in a manifest's place",
         data=b"this is not an Avro file\n")
    case(d + "empty.avro", "manifest", m_err, "empty", "a zero-byte manifest", data=b"")
    case(d + "truncated_header.avro", "manifest", m_err, base,
         "the first 40 bytes of the manifest (inside its Avro header)", data=good[:40])
    case(
        d + "truncated_block.avro",
        "manifest",
        m_err,
        base,
        "the manifest cut in the middle of its data block",
        data=good[: hdr + (len(good) - hdr) // 2],
    )
    case(d + "bad_sync_marker.avro", "manifest", m_err, base,
         "the sync marker after the data block differs from the header's",
         data=edit(good, len(good) - 16, bytes(16)))
    case(d + "unknown_codec.avro", "manifest", m_err, base,
         "avro.codec is 'lzma-x', not a codec", data=re_encoded(meta("avro.codec", b"lzma-x")))
    case(d + "deflate_garbage.avro", "manifest", m_err, base,
         "the deflate-compressed block replaced by bytes that do not inflate",
         data=avro_write(copy_avro(m), raw_block=b"\xff\xfe\xfd\xfc" * 16))
    case(d + "block_size_past_end.avro", "manifest", m_err, base,
         "the data block's byte count says 1 MB",
         data=with_block_size(good, 1 << 20))
    case(
        d + "avro_schema_not_json.avro",
        "manifest",
        r"avro.schema|not a valid Avro manifest",
        base,
        "the avro.schema metadata is '{not json'",
        data=replace_meta(good, "avro.schema", b"{not json"),
    )
    case(
        d + "avro_type_name_invalid.avro",
        "manifest",
        r"its avro.schema names a type 'manifest entry', which is not an Avro name",
        base,
        "the Avro record type is named 'manifest entry' (a space: not an Avro name)",
        data=replace_meta(good, "avro.schema", renamed_record(m, "manifest entry")),
    )
    case(d + "iceberg_schema_not_json.avro", "manifest", r"its schema is not valid JSON", base,
         "the manifest's 'schema' metadata is '{'", data=replace_meta(good, "schema", b"{"))
    # A manifest's own `partition-spec` and `partition-spec-id` are not read when the
    # manifest list names its spec (as Java): garbage there is no error, so no case.
    case(d + "content_mismatch.avro", "manifest",
         r"\(data manifest\) lists file '.*' with content PositionDeletes", base,
         "a data manifest whose entry is a position-delete file (content 1)",
         data=re_encoded(data_file("content", 1)))
    case(d + "existing_without_sequence_number.avro", "manifest",
         r"its EXISTING entry for '.*' has no sequence number", base,
         "an EXISTING entry (status 0) without a sequence number",
         data=re_encoded(lambda g: entry(g).update({"status": 0})))
    case(d + "status_unknown.avro", "manifest", m_err, base,
         "an entry of status 7 (0 EXISTING, 1 ADDED, 2 DELETED)",
         data=re_encoded(lambda g: entry(g).update({"status": 7})))
    case(d + "file_format_unknown.avro", "manifest", m_err, base,
         "an entry whose file_format is 'XLSX'", data=re_encoded(data_file("file_format", "XLSX")))
    case(d + "content_unknown.avro", "manifest", m_err, base,
         "an entry whose data_file.content is 9", data=re_encoded(data_file("content", 9)))
    case(
        d + "record_count_negative.avro",
        "manifest",
        r"is not a valid Avro manifest: .*out of range integral type conversion",
        base,
        "an entry whose record_count is -5",
        data=re_encoded(data_file("record_count", -5)),
    )
    case(
        d + "file_size_negative.avro",
        "manifest",
        r"is not a valid Avro manifest: .*out of range integral type conversion",
        base,
        "an entry whose file_size_in_bytes is -1",
        data=re_encoded(data_file("file_size_in_bytes", -1)),
    )
    case(
        d + "lower_bound_wrong_length.avro",
        "manifest",
        r"is not a valid Avro manifest: .*could not convert slice to array",
        base,
        "an entry whose lower bound of column id (an int: 4 bytes) has 2 bytes",
        data=re_encoded(lambda g: entry(g)["data_file"].update(
            {"lower_bounds": (1, [{"key": 1, "value": b"\x01\x00"}])})),
    )
    case(d + "missing_file_path.avro", "manifest", m_err, base,
         "the entries' Avro schema has no file_path", data=without_file_path(m))
    case(d + "manifest_list_in_place.avro", "manifest", m_err, rel(BASE_LIST),
         "a manifest list where a manifest belongs", data=BASE_LIST.read_bytes())


def renamed_record(f: AvroFile, name: str) -> bytes:
    """The Avro schema of `f` with its top record type named `name`."""
    schema = json.loads(f.meta["avro.schema"])
    schema["name"] = name
    return json.dumps(schema).encode()


def with_block_size(data: bytes, size: int) -> bytes:
    """`data` with the byte count of its first data block set to `size`."""
    at = header_end(data)
    count, pos = read_long(data, at)
    _, pos = read_long(data, pos)
    return data[:at] + avro_long(count) + avro_long(size) + data[pos:]


def replace_meta(data: bytes, key: str, value: bytes) -> bytes:
    """`data` with the Avro header key `key` set to `value`, blocks kept byte for byte."""
    pos = 4
    meta = []
    while True:
        n, pos = read_long(data, pos)
        if n == 0:
            break
        for _ in range(abs(n)):
            k, pos = AvroCodec(None).decode("string", data, pos)
            v, pos = AvroCodec(None).decode("bytes", data, pos)
            meta.append((k, value if k == key else v))
    out = bytearray(AVRO_MAGIC) + avro_long(len(meta))
    for k, v in meta:
        out += avro_bytes(k.encode()) + avro_bytes(v)
    return bytes(out) + b"\x00" + data[pos:]


def without_file_path(m: AvroFile) -> bytes:
    def change(schema):
        for f in schema["fields"]:
            if f["name"] == "data_file":
                f["type"]["fields"] = [x for x in f["type"]["fields"] if x["name"] != "file_path"]

    g = with_avro_schema(m, change)
    for r in g.records:
        del r["data_file"]["file_path"]
    return avro_write(g)


def list_cases() -> None:
    good = BASE_LIST.read_bytes()
    m = avro_read(BASE_LIST)
    base = rel(BASE_LIST)
    d = "iceberg/manifest_list/"
    write("good/manifest_list.avro", good)
    hdr = header_end(good)
    err = r"is not a valid Avro manifest list"

    def re_encoded(change) -> bytes:
        g = copy_avro(m)
        change(g)
        return avro_write(g)

    case(
        d + "not_avro.avro",
        "manifest_list",
        err,
        "text",
        "a text file in a manifest list's place",
        data=b"this is not an Avro file\n",
    )
    case(d + "empty.avro", "manifest_list", err, "empty", "a zero-byte manifest list", data=b"")
    case(
        d + "truncated.avro",
        "manifest_list",
        err,
        base,
        "the manifest list cut in the middle of its data block",
        data=good[: hdr + (len(good) - hdr) // 2],
    )
    case(d + "bad_sync_marker.avro", "manifest_list", err, base,
         "the sync marker after the data block differs from the header's",
         data=edit(good, len(good) - 16, bytes(16)))
    case(d + "deflate_garbage.avro", "manifest_list", err, base,
         "the deflate-compressed block replaced by bytes that do not inflate",
         data=avro_write(copy_avro(m), raw_block=b"\xff\xfe\xfd\xfc" * 16))
    case(d + "manifest_in_place.avro", "manifest_list", err, rel(BASE_MANIFEST),
         "a manifest where the manifest list belongs", data=BASE_MANIFEST.read_bytes())
    case(d + "content_unknown.avro", "manifest_list", err, base,
         "a manifest of content 7 (0 data, 1 deletes)",
         data=re_encoded(lambda g: g.records[0].update({"content": 7})))
    case(d + "missing_manifest_path.avro", "manifest_list", err, base,
         "the Avro schema of the list has no manifest_path",
         data=list_without(m, "manifest_path"))
    case(
        d + "avro_type_name_invalid.avro",
        "manifest_list",
        r"its avro.schema names a type 'manifest-file', which is not an Avro name",
        base,
        "the Avro record type is named 'manifest-file' (a dash: not an Avro name)",
        data=replace_meta(good, "avro.schema", renamed_record(m, "manifest-file")),
    )
    case(
        d + "manifest_missing.avro",
        "manifest_list",
        r"manifest '.*/no-such-manifest\.avro' \(listed in manifest list '.*/snap-1001\.avro'\) "
        r"does not exist",
        base,
        "the list names a manifest that does not exist",
        data=re_encoded(lambda g: g.records[0].update(
            {"manifest_path": "data/persistent/equality_deletes/no-such-manifest.avro"})),
    )


def list_without(m: AvroFile, name: str) -> bytes:
    def change(schema):
        schema["fields"] = [f for f in schema["fields"] if f["name"] != name]

    g = with_avro_schema(m, change)
    for r in g.records:
        del r[name]
    return avro_write(g)


def metadata_cases() -> None:
    text = BASE_METADATA.read_text()
    base = rel(BASE_METADATA)
    d = "iceberg/metadata/"
    write("good/table.metadata.json", text.encode())

    def changed(change) -> bytes:
        md = json.loads(text)
        change(md)
        return json.dumps(md, indent=2).encode()

    def meta(name, expected, problem, change=None, data=None, b=base):
        if data is None:
            data = changed(change)
        case(d + name, "metadata", expected, b, problem, data=data)

    meta(
        "not_json.metadata.json",
        r"not valid JSON",
        "a text file",
        data=b"format-version: 2\n",
        b="text",
    )
    meta("empty.metadata.json", r"not valid JSON", "a zero-byte file", data=b"", b="empty")
    meta("truncated.metadata.json", r"not valid JSON", "the first half of the file",
         data=text.encode()[: len(text) // 2])
    meta(
        "json_array.metadata.json",
        r"not Iceberg table metadata: its JSON is an array, not an object",
        "a JSON array, not an object",
        data=b"[]\n",
        b="text",
    )
    meta(
        "not_utf8.metadata.json",
        r"not valid JSON",
        "a table property value with the byte 0xFF (not UTF-8)",
        data=text.encode().replace(b'"zhangjun"', b'"zhang\xffjun"'),
    )
    meta("gzip_garbage.gz.metadata.json", r"cannot inflate the gzip-compressed file",
         "a gzip header followed by bytes that do not inflate",
         data=b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\xde\xad\xbe\xef" * 8)
    meta("gzip_truncated.gz.metadata.json", r"cannot inflate the gzip-compressed file",
         "the gzip-compressed metadata cut in half",
         data=(lambda z: z[: len(z) // 2])(gzip.compress(text.encode(), mtime=0)))
    meta("format_version_4.metadata.json", r"format-version", "format-version 4",
         lambda md: md.update({"format-version": 4}))
    meta("format_version_missing.metadata.json", r"no numeric format-version", "no format-version",
         lambda md: md.pop("format-version"))
    meta(
        "format_version_string.metadata.json",
        r"no numeric format-version",
        "format-version \"2\" (a string)",
        lambda md: md.update({"format-version": "2"}),
    )
    meta("schemas_missing.metadata.json", r"not valid Iceberg table metadata", "no schemas",
         lambda md: md.pop("schemas"))
    meta(
        "current_schema_unknown.metadata.json",
        r"No schema exists with the current schema id 7",
        "current-schema-id 7; the only schema is 0",
        lambda md: md.update({"current-schema-id": 7}),
    )
    meta(
        "default_spec_unknown.metadata.json",
        r"Default partition spec 3 not found",
        "default-spec-id 3; the only spec is 0",
        lambda md: md.update({"default-spec-id": 3}),
    )
    meta(
        "current_snapshot_unknown.metadata.json",
        r"Snapshot for current snapshot id 42 does not exist",
        "current-snapshot-id 42, which no snapshot has",
        lambda md: md.update({"current-snapshot-id": 42}),
    )
    meta(
        "main_ref_unknown_snapshot.metadata.json",
        r"Snapshot for reference main does not exist",
        "the main branch names snapshot 42, which does not exist",
        lambda md: md["refs"]["main"].update({"snapshot-id": 42}),
    )
    meta(
        "ref_type_unknown.metadata.json",
        r"its refs do not parse: unknown variant `trunk`, expected `branch` or `tag`",
        "the main ref's type is 'trunk'",
        lambda md: md["refs"]["main"].update({"type": "trunk"}),
    )
    meta(
        "field_type_unknown.metadata.json",
        r"schema 0 of schemas does not parse",
        "column name has type 'varchar'",
        lambda md: md["schemas"][0]["fields"][1].update({"type": "varchar"}),
    )
    meta(
        "duplicate_field_id.metadata.json",
        r"Found duplicate 'field\.id' 1",
        "columns id and name both have field id 1",
        lambda md: md["schemas"][0]["fields"][1].update({"id": 1}),
    )
    meta(
        "partition_source_unknown.metadata.json",
        r"No column with source column id 99",
        "a partition field whose source column 99 does not exist",
        lambda md: md["partition-specs"][0].update(
            {"fields": [{"source-id": 99, "field-id": 1000, "name": "p", "transform": "identity"}]}
        ),
    )
    meta(
        "snapshot_without_manifest_list.metadata.json",
        r"snapshot 0 of snapshots has no manifest-list",
        "a v2 snapshot without manifest-list",
        lambda md: md["snapshots"][0].pop("manifest-list"),
    )
    meta(
        "manifest_list_missing.metadata.json",
        r"manifest list '.*no-such-list\.avro' does not exist",
        "the snapshot's manifest-list names a file that does not exist",
        lambda md: md["snapshots"][0].update(
            {"manifest-list": "data/persistent/equality_deletes/no-such-list.avro"}),
    )


def puffin_cases() -> None:
    java = JAVA_PUFFIN.read_bytes()
    blob5 = (JAVA_BLOBS / "small-alternating-values-position-index.bin").read_bytes()
    assert java[4:54] == blob5
    base_note = f"{rel(JAVA_PUFFIN)} (Java-written; positions 1, 3, 5, 7, 9)"
    d = "iceberg/puffin/"
    # The good base: the Java file with its footer's referenced-data-file left out, so
    # it can serve any data file of the test's table.
    good = puffin(blob5, dv_footer(50, 5))
    write("good/dv.puffin", good)
    dv = "dv=4,50,5"
    bitmap5 = blob5[8:-4]
    n = len(good)
    payload_len = struct.unpack("<I", good[-12:-8])[0]

    def p(name, expected, problem, data, setup=dv, b=base_note):
        if "{len}" in setup:
            payload = struct.unpack("<I", data[-12:-8])[0]
            setup = setup.replace("{len}", str(len(data) - 4 - 4 - payload - 12))
        case(d + name, "puffin", expected, b, problem, setup=setup, data=data)

    p("not_puffin.puffin", r"not a Puffin file \(no PFA1 magic at its start\)", "a text file",
      b"this is not a Puffin file, but it is long enough\n", b="text")
    p("bare_dv_blob.puffin", r"not a Puffin file \(no PFA1 magic at its start\)",
      "a bare deletion-vector blob without its Puffin container (as early DuckDB versions wrote)",
      BARE_DV.read_bytes(), setup="dv=0,42,1", b=rel(BARE_DV))
    p("empty.puffin", r"too short for a Puffin file", "a zero-byte file", b"", b="empty")
    p(
        "magic_only.puffin",
        r"too short for a Puffin file|Puffin footer",
        "only the magic PFA1",
        b"PFA1",
        b="text",
    )
    p("truncated_footer.puffin", r"its Puffin footer is missing \(no PFA1 magic at its end\)",
      "the file without its last 10 bytes", good[:-10])
    p(
        "truncated_blob.puffin",
        r"its Puffin footer is missing \(no PFA1 magic at its end\)",
        "the file cut inside the blob",
        good[:30],
    )
    p(
        "footer_magic_bad.puffin",
        r"its Puffin footer is missing",
        "the trailing magic PFA1 overwritten",
        good[:-4] + b"XXXX",
    )
    p("footer_size_huge.puffin", r"its Puffin footer size exceeds the file",
      "the footer payload size says 2^32-1 bytes", edit(good, n - 12, b"\xff\xff\xff\xff"))
    p("footer_size_short.puffin", r"its Puffin footer is not JSON",
      "the footer payload size 5 bytes short: the JSON is read from its middle",
      edit(good, n - 12, struct.pack("<I", payload_len - 5)))
    p("footer_not_json.puffin", r"its Puffin footer is not JSON", "the footer payload is not JSON",
      puffin_raw(blob5, b"{blobs: not json}"))
    p(
        "footer_lz4.puffin",
        r"its Puffin footer is LZ4-compressed",
        "the footer's compressed flag is set",
        puffin(blob5, dv_footer(50, 5), flags=b"\x01\0\0\0"),
    )
    p("footer_no_blob_at_offset.puffin", r"its Puffin footer lists no blob at offset 4",
      "the footer lists the blob at offset 8", puffin(blob5, dv_footer(50, 5, offset=8)))
    p("footer_no_blobs.puffin", r"its Puffin footer lists no blob at offset 4",
      "the footer's blob list is empty", puffin(blob5, {"blobs": []}))
    p(
        "blob_type_wrong.puffin",
        r"the blob at offset 4 is 'apache-datasketches-theta-v1', not deletion-vector-v1",
        "the blob's type is apache-datasketches-theta-v1",
        puffin(blob5, dv_footer(50, 5, type="apache-datasketches-theta-v1")),
    )
    p("blob_length_mismatch.puffin", r"the blob at offset 4 does not have the manifest's length 50",
      "the footer says the blob is 49 bytes; the manifest says 50",
      puffin(blob5, dv_footer(49, 5)))
    p(
        "blob_compressed.puffin",
        r"the deletion vector is compressed \(zstd\)",
        "the footer says the blob is zstd-compressed",
        puffin(blob5, dv_footer(50, 5, **{"compression-codec": "zstd"})),
    )
    p(
        "referenced_other_file.puffin",
        r"belongs to data file 's3://warehouse/db/table/data/00000-0-abc\.parquet'",
        "the Java file as written: its blob belongs to another data file",
        java,
        b=rel(JAVA_PUFFIN),
    )
    p(
        "dv_crc_wrong.puffin",
        r"the deletion vector's CRC-32 does not match its contents",
        "the blob's CRC-32 with its low bit flipped",
        puffin(blob5[:-1] + bytes([blob5[-1] ^ 1]), dv_footer(50, 5)),
    )
    p(
        "dv_magic_wrong.puffin",
        r"the deletion vector does not start with its magic bytes D1 D3 39 64",
        "the blob's magic is 00 00 00 00 (CRC recomputed)",
        puffin(dv_blob(bitmap5, bytes(4)), dv_footer(50, 5)),
    )
    p(
        "dv_length_field_wrong.puffin",
        r"the deletion vector's length field says 1000 bytes",
        "the blob's length field says 1000",
        puffin(struct.pack(">I", 1000) + blob5[4:], dv_footer(50, 5)),
    )
    p("dv_keys_not_ascending.puffin", r"the deletion vector's bitmap keys are not ascending",
      "two bitmaps with keys 1 then 0 (CRC recomputed)",
      dv_case(treemap([(1, roaring32([1])), (0, roaring32([2]))]), 2), setup="dv=4,{len},2")
    p("dv_key_too_high.puffin", r"positions with high bits 0x80000000",
      "a bitmap key 2^31: positions beyond the largest row position (CRC recomputed)",
      dv_case(treemap([(0x80000000, roaring32([1]))]), 1), setup="dv=4,{len},1")
    p("dv_bitmap_cut.puffin", r"the deletion vector's bitmap (is cut off|does not decode)",
      "the Roaring bitmap cut inside its container (length and CRC recomputed)",
      dv_case(bitmap5[:-3], 5), setup="dv=4,{len},5")
    p("dv_bitmap_cookie_wrong.puffin", r"the deletion vector's bitmap does not decode",
      "the Roaring bitmap's cookie is 0xDEAD (length and CRC recomputed)",
      dv_case(bitmap5[:12] + b"\xad\xde\0\0" + bitmap5[16:], 5), setup="dv=4,{len},5")
    p("dv_trailing_bytes.puffin", r"4 bytes follow the deletion vector's bitmap",
      "4 bytes after the bitmap (length and CRC recomputed)", dv_case(bitmap5 + b"\0\0\0\0", 5),
      setup="dv=4,{len},5")
    p("dv_too_short.puffin", r"a deletion vector of 8 bytes is too short",
      "the manifest's blob is 8 bytes", puffin(blob5[:8], dv_footer(8, 5)), setup="dv=4,8,5")
    p(
        "dv_cardinality_mismatch.puffin",
        r"the deletion vector holds 5 positions, its manifest entry says 7",
        "a good blob of 5 positions whose manifest entry says 7",
        good,
        setup="dv=4,50,7",
    )


def dv_case(bitmap: bytes, cardinality: int) -> bytes:
    blob = dv_blob(bitmap)
    return puffin(blob, dv_footer(len(blob), cardinality))


def puffin_raw(blob: bytes, payload: bytes) -> bytes:
    return b"PFA1" + blob + b"PFA1" + payload + struct.pack("<I", len(payload)) + b"\0\0\0\0PFA1"


def delete_cases() -> None:
    path_id, pos_id = 2147483546, 2147483545
    d = "iceberg/position_deletes/"
    base = "written by generate.py"
    # The good base: two positions of the data file (the test's referenced data file).
    good = ParquetWriter([
        Column("file_path", BYTE_ARRAY, ["d.parquet"] * 2, REQUIRED, UTF8, field_id=path_id),
        Column("pos", INT64, [0, 2], repetition=REQUIRED, field_id=pos_id),
    ]).write()[0]
    write("good/position_deletes.parquet", good)
    # Not bad: the same positions out of order. The spec sorts them, but Java's, Trino's
    # and PyIceberg's readers index them in bitmaps, and so does lakescan.
    write("good/position_deletes_unsorted.parquet", ParquetWriter([
        Column("file_path", BYTE_ARRAY, ["d.parquet"] * 2, REQUIRED, UTF8, field_id=path_id),
        Column("pos", INT64, [2, 0], repetition=REQUIRED, field_id=pos_id),
    ]).write()[0])

    def pd(name, expected, problem, columns, setup="deletes=referenced"):
        case(d + name, "position_deletes", expected, base, problem, setup=setup,
             data=ParquetWriter(columns).write()[0])

    def fp(values, **kw):
        return Column("file_path", BYTE_ARRAY, values, converted=UTF8, field_id=path_id, **kw)

    def pos(values, **kw):
        return Column("pos", INT64, values, field_id=pos_id, **kw)

    case(d + "not_parquet.parquet", "position_deletes", r"not a readable Parquet file", "text",
         "a text file in a position-delete file's place", setup="deletes=referenced",
         data=b"file_path,pos\nd.parquet,0\n")
    case(
        d + "truncated.parquet",
        "position_deletes",
        r"not a readable Parquet file",
        base,
        "the good position-delete file cut in half",
        setup="deletes=referenced",
        data=good[: len(good) // 2],
    )
    pd("missing_pos.parquet", r"not a position-delete file: it needs columns file_path",
       "only a file_path column", [fp(["d.parquet"])])
    pd("wrong_field_ids.parquet", r"not a position-delete file: it needs columns file_path",
       "columns 'path' (id 1) and 'position' (id 2): neither the names nor the ids",
       [Column("path", BYTE_ARRAY, ["d.parquet"], converted=UTF8, field_id=1),
        Column("position", INT64, [0], field_id=2)])
    pd("pos_int32.parquet", r"pos is Int32, not BIGINT", "pos stored as INT32",
       [fp(["d.parquet"]), Column("pos", INT32, [0], field_id=pos_id)])
    pd("pos_string.parquet", r"pos is Utf8, not BIGINT", "pos stored as a string",
       [fp(["d.parquet"]), Column("pos", BYTE_ARRAY, ["0"], converted=UTF8, field_id=pos_id)])
    pd(
        "pos_null.parquet",
        r"a row has a NULL pos",
        "a NULL pos",
        [fp(["d.parquet"] * 2), pos([0, None])],
    )
    pd(
        "pos_negative.parquet",
        r"position -1 is negative",
        "a pos of -1",
        [fp(["d.parquet"]), pos([-1])],
    )
    # A row without a file_path is skipped, as Java's, PyIceberg's and Impala's readers
    # skip it: no case.
    pd(
        "file_path_int.parquet",
        r"file_path is Int64, not a string",
        "file_path stored as INT64",
        [Column("file_path", INT64, [1, 2], field_id=path_id), pos([0, 1])],
        setup="deletes=unreferenced",
    )

    d = "iceberg/equality_deletes/"
    good = ParquetWriter([Column("id", INT32, [2], field_id=1)]).write()[0]
    write("good/equality_deletes.parquet", good)

    def ed(name, expected, problem, columns):
        case(d + name, "equality_deletes", expected, base, problem,
             data=ParquetWriter(columns).write()[0])

    case(
        d + "not_parquet.parquet",
        "equality_deletes",
        r"cannot read Iceberg equality-delete file '.*': .*(footer|Corrupt)",
        "text",
        "a text file in an equality-delete file's place",
        data=b"id\n2\n",
    )
    case(
        d + "truncated.parquet",
        "equality_deletes",
        r"cannot read Iceberg equality-delete file '.*': .*Corrupt footer",
        base,
        "the good equality-delete file cut in half",
        data=good[: len(good) // 2],
    )
    ed(
        "key_missing.parquet",
        r"has no top-level column with field id 1, one of its equality ids",
        "only a column of field id 2; the key is field id 1",
        [Column("name", BYTE_ARRAY, ["b"], converted=UTF8, field_id=2)],
    )
    ed(
        "key_wrong_type.parquet",
        r"key column 'id' \(field id 1\) is stored as Utf8, which cannot be compared with the "
        r"table type Int32",
        "the key (field id 1, id INT) stored as a string",
        [Column("id", BYTE_ARRAY, ["2"], converted=UTF8, field_id=1)],
    )
    ed(
        "key_without_field_id.parquet",
        r"has no top-level column with field id 1, one of its equality ids",
        "the key column 'x' has no field id",
        [Column("x", INT32, [2])],
    )


# ---------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------

README_HEAD = """\
# Bad-input corpus

Every file (or directory) here is input lakescan must refuse: a query over it fails with an
error that names the file and says what is wrong; it never panics and never returns rows.
`crates/lakescan/tests/bad_input_corpus.rs` runs each row of `cases.tsv`; the fuzz targets in
`crates/lakescan/tests/fuzz.rs` mutate the good files of `good/`.

**Generated**: `python3 testdata/bad/generate.py` (Python 3.11, standard library only) writes
every file here, `cases.tsv` and this README; edit the script, not the files. Its output is
deterministic.

## Where the bytes come from

* `good/good.parquet` is written by hand by the script (Thrift compact protocol, one row group:
  `id` INT64 required PLAIN, `name` UTF8 optional dictionary-encoded; rows (1, a), (2, b),
  (3, a)); every `parquet/` case is it with bytes edited at offsets the writer reports, or a
  file the same writer wrote with another schema. The position- and equality-delete files
  are written the same way, with Iceberg field ids.
* Manifests, manifest lists and the metadata JSON start from the `equality_deletes` table of
  `../duckdb-iceberg/data/persistent/` (MIT, `../duckdb-iceberg/LICENSE`): decoded, edited,
  encoded again, or byte-edited.
* Deletion vectors and Puffin files start from `../deletion-vectors/` (Apache-2.0, the
  `LICENSE` in each folder): the Java-written `single-blob-dv.puffin` and the golden blob
  `small-alternating-values-position-index.bin` (positions 1, 3, 5, 7, 9); where a case is
  about one field, the blob's length and CRC-32 are recomputed so that field is the only
  problem. `bare_dv_blob.puffin` is DuckDB's legacy bare blob.
* Licenses: cases made from DuckDB files are under the MIT license of
  `LICENSE-duckdb-iceberg`; cases made from the deletion-vector golden files under the
  Apache-2.0 license of `LICENSE-apache-iceberg` (apache/iceberg) and
  `LICENSE-apache-iceberg-go` (apache/iceberg-go); the rest, and this script, under
  lakescan's Apache-2.0.

## How the test uses each kind

| kind | placed as | queries |
|---|---|---|
| `parquet` | the only file of a Hive table `CREATE EXTERNAL TABLE t (id BIGINT, name VARCHAR) STORED AS HIVE LOCATION '<dir>'` | `SELECT * FROM t` and `SELECT count(*) FROM t`; `queries=select`: only the first, for a corruption the count never reads (pages, a column's stored type: a count is answered from the footer) |
| `hive` | the directory, copied as the table directory; `columns=`, `partitioned_by=`, `options=` give the DDL | both |
| `manifest` | the data manifest `metadata/m-1-data-0.avro` of a table written by `lakescan_iceberg::writer::TableWriter` (schema `id int, name string, bir date`, the DuckDB table's; `relative_path_base` set to `testdata/duckdb-iceberg` so the DuckDB paths inside resolve) | both |
| `manifest_list` | the manifest list `metadata/snap-1001.avro` of that table | both |
| `metadata` | a metadata file of its own name in the table's `metadata/`, which `LOCATION` names | both |
| `puffin` | a deletion vector `data/<name>` committed by hand for the table's data file; `dv=offset,length,cardinality` are its manifest entry's `content_offset`, `content_size_in_bytes`, `record_count` | both |
| `position_deletes` | a position-delete file `data/<name>` (`deletes=referenced`: its entry names the data file, so only `pos` is read; `unreferenced`: it applies to the unpartitioned table's files) | both |
| `equality_deletes` | an equality-delete file `data/<name>` over equality id 1 (`id`) | both |

Each query must fail: an error that contains the placed file's name (for `hive` cases the
`names` column: the offending directory or file) and matches `expected` (a regular
expression). Each kind's `good/` file, placed the same way, must read
(`good_files_read`), so an error comes from the corruption, not from the placement.

## Cases

| path | kind | problem | base | expected error |
|---|---|---|---|---|
"""


def main() -> None:
    parquet_cases()
    hive_cases()
    manifest_cases()
    list_cases()
    metadata_cases()
    puffin_cases()
    delete_cases()
    # The licenses of the files cases are made from (the MIT and Apache-2.0 notices).
    write("LICENSE-duckdb-iceberg", (TESTDATA / "duckdb-iceberg/LICENSE").read_bytes())
    write("LICENSE-apache-iceberg", (DV / "iceberg-core-dv-golden/LICENSE").read_bytes())
    write("LICENSE-apache-iceberg-go", (DV / "iceberg-go-dv/LICENSE").read_bytes())
    # Start from a clean tree: everything but this script and the README template.
    for child in HERE.iterdir():
        if child.name in ("generate.py",):
            continue
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
    for path, data in sorted(WRITTEN.items()):
        target = HERE / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    rows = ["path\tkind\texpected\tsetup\tnames\tbase\tproblem"]
    for c in CASES:
        for v in (c.expected, c.setup, c.names, c.base, c.problem):
            assert "\t" not in v and "\n" not in v, c
        rows.append("\t".join([c.path, c.kind, c.expected, c.setup, c.names, c.base, c.problem]))
    (HERE / "cases.tsv").write_text("\n".join(rows) + "\n")
    readme = README_HEAD
    for c in CASES:
        md = lambda s: s.replace("|", "\\|")
        expected = md(c.expected) or "(any)"
        readme += f"| `{c.path}` | {c.kind} | {md(c.problem)} | {md(c.base)} | `{expected}` |\n"
    (HERE / "README.md").write_text(readme)
    total = sum(p.stat().st_size for p in HERE.rglob("*") if p.is_file())
    print(f"{len(CASES)} cases, {len(WRITTEN)} files, {total} bytes under {HERE}", file=sys.stderr)
    if total > 1_000_000:
        raise SystemExit("the corpus must stay under 1 MB")


if __name__ == "__main__":
    main()
