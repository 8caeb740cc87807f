#!/tmp/venv/bin/python
"""Copy an Iceberg table folder, rewriting the location prefix OLD to NEW in its metadata
JSON, manifest lists, manifests (Avro, re-encoded with the same schema, metadata and codec)
and position-delete files (Parquet).

Used once: `python relocate.py SRC DST OLD NEW`, with NEW a path relative to this
repository's `testdata/` (the tests read the table with `relative_path_base`).
"""
import sys, os, shutil, json, fastavro
import pyarrow as pa, pyarrow.parquet as pq

src, dst, old = sys.argv[1], sys.argv[2], sys.argv[3]
new = sys.argv[4]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)


def fix(o):
    if isinstance(o, str):
        return o.replace(old, new) if o.startswith(old) else o
    if isinstance(o, dict):
        return {k: fix(v) for k, v in o.items()}
    if isinstance(o, list):
        return [fix(v) for v in o]
    return o


for root, _, files in os.walk(dst):
    for f in files:
        p = os.path.join(root, f)
        if f.endswith('.metadata.json'):
            j = json.load(open(p))
            json.dump(fix(j), open(p, 'w'), indent=1)
        elif f.endswith('.avro') and '/metadata/' in p:
            with open(p, 'rb') as fh:
                r = fastavro.reader(fh)
                schema = r.writer_schema
                meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.metadata.items() if not k.startswith('avro.')}
                codec = r.metadata.get('avro.codec', 'null')
                recs = [fix(x) for x in r]
            with open(p, 'wb') as fh:
                fastavro.writer(fh, schema, recs, codec=codec, metadata=meta)
        elif f.endswith('.parquet'):
            pf = pq.ParquetFile(p)
            if 'file_path' in pf.schema_arrow.names:
                t = pq.read_table(p)
                i = t.column_names.index('file_path')
                col = pa.array([fix(x) for x in t.column('file_path').to_pylist()])
                t = t.set_column(i, pa.field('file_path', pa.string(), nullable=False, metadata=t.schema.field(i).metadata), col)
                pq.write_table(t, p)
print('ok', dst)
