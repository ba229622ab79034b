#!/usr/bin/env node
// Makes an ONNX backend-test case from onnxruntime's results (dev-time; needs
// onnxruntime-node, installed for instance with
//   ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save --no-package-lock onnxruntime-node
// in the repository root, whose node_modules/ git ignores):
//
//   node tools/ort_case.js MODEL.onnx OUTDIR [INPUT.pb | - ]...
//
// writes OUTDIR/model.onnx and OUTDIR/test_data_set_0/{input,output}_K.pb:
// the inputs in graph-input order (the files given, or for "-" and for
// inputs past the list, deterministic pseudo-random values in [-1, 1] of the
// input's declared type and shape) and onnxruntime's outputs. Then
// `interp test OUTDIR` checks pfvm against onnxruntime. Exit status 3 when
// onnxruntime-node is not installed (callers skip), 1 on other errors.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
    ort = require('onnxruntime-node');
} catch (e) {
    console.error('ort_case: onnxruntime-node is not installed');
    process.exit(3);
}

// ---- TensorProto, the fields pfvm and the backend tests use ----------------

const DT = { 1: 'float32', 2: 'uint8', 3: 'int8', 5: 'int16', 6: 'int32', 7: 'int64', 9: 'bool', 11: 'float64' };
const CODE = { float32: 1, uint8: 2, int8: 3, int16: 5, int32: 6, int64: 7, bool: 9, float64: 11 };
const ARRAY = {
    float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array,
    int64: BigInt64Array, bool: Uint8Array, float64: Float64Array,
};

function readVarint(buf, pos) {
    let v = 0n, shift = 0n, b;
    do {
        b = buf[pos.i++];
        v |= BigInt(b & 0x7f) << shift;
        shift += 7n;
    } while (b & 0x80);
    return v;
}

function decodeTensor(buf) {
    const pos = { i: 0 };
    const dims = [];
    let dtype = 0, raw = null, name = '';
    const f32 = [], f64 = [], i64 = [], i32 = [];
    while (pos.i < buf.length) {
        const key = Number(readVarint(buf, pos)), field = key >> 3, wire = key & 7;
        let payload = null;
        if (wire === 0) {
            const v = readVarint(buf, pos);
            if (field === 1) dims.push(Number(BigInt.asIntN(64, v)));
            else if (field === 2) dtype = Number(v);
            else if (field === 5) i32.push(Number(BigInt.asIntN(32, v)));
            else if (field === 7) i64.push(BigInt.asIntN(64, v));
            continue;
        }
        if (wire === 5) {
            if (field === 4) f32.push(buf.readFloatLE(pos.i));
            pos.i += 4;
            continue;
        }
        if (wire === 1) {
            if (field === 10) f64.push(buf.readDoubleLE(pos.i));
            pos.i += 8;
            continue;
        }
        if (wire !== 2) throw new Error('unsupported wire type ' + wire);
        const len = Number(readVarint(buf, pos));
        payload = buf.subarray(pos.i, pos.i + len);
        pos.i += len;
        if (field === 8) name = payload.toString('utf8');
        else if (field === 9) raw = Buffer.from(payload);
        else if (field === 4) for (let j = 0; j < len; j += 4) f32.push(payload.readFloatLE(j));
        else if (field === 10) for (let j = 0; j < len; j += 8) f64.push(payload.readDoubleLE(j));
        else if (field === 1 || field === 5 || field === 7) {
            const p = { i: 0 };
            while (p.i < payload.length) {
                const v = readVarint(payload, p);
                if (field === 1) dims.push(Number(BigInt.asIntN(64, v)));
                else if (field === 5) i32.push(Number(BigInt.asIntN(32, v)));
                else i64.push(BigInt.asIntN(64, v));
            }
        }
    }
    const type = DT[dtype];
    if (!type) throw new Error('unsupported data type ' + dtype);
    const n = dims.reduce((a, b) => a * b, 1);
    let data;
    if (raw) {
        const A = ARRAY[type];
        data = new A(n);
        new Uint8Array(data.buffer).set(raw.subarray(0, n * A.BYTES_PER_ELEMENT));
    } else if (type === 'float32') data = Float32Array.from(f32);
    else if (type === 'float64') data = Float64Array.from(f64);
    else if (type === 'int64') data = BigInt64Array.from(i64);
    else data = ARRAY[type].from(i32);
    return { name, tensor: new ort.Tensor(type, data, dims) };
}

function varint(v) {
    const out = [];
    let x = BigInt.asUintN(64, BigInt(v));
    do {
        let b = Number(x & 0x7fn);
        x >>= 7n;
        if (x) b |= 0x80;
        out.push(b);
    } while (x);
    return Buffer.from(out);
}

function field(num, wire, payload) {
    return Buffer.concat([varint((num << 3) | wire), payload]);
}

function encodeTensor(name, t) {
    const parts = t.dims.map((d) => field(1, 0, varint(d)));
    parts.push(field(2, 0, varint(CODE[t.type])));
    const nameBuf = Buffer.from(name, 'utf8');
    parts.push(field(8, 2, Buffer.concat([varint(nameBuf.length), nameBuf])));
    const raw = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    parts.push(field(9, 2, Buffer.concat([varint(raw.length), raw])));
    return Buffer.concat(parts);
}

// ---- inputs -------------------------------------------------------------------

let seed = 12345;
function rand() {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 * 2 - 1;
}

function randomTensor(meta) {
    const dims = meta.shape.map((d) => {
        if (typeof d !== 'number' || d < 0) throw new Error(`input '${meta.name}' has a symbolic dim: give its .pb file`);
        return d;
    });
    const n = dims.reduce((a, b) => a * b, 1), A = ARRAY[meta.type];
    if (!A) throw new Error(`input '${meta.name}' has type ${meta.type}`);
    const data = new A(n);
    for (let i = 0; i < n; i++) {
        const v = rand();
        if (meta.type === 'int64') data[i] = 0n;
        else if (meta.type === 'float32' || meta.type === 'float64') data[i] = v;
    }
    return new ort.Tensor(meta.type, data, dims);
}

async function main() {
    const args = process.argv.slice(2);
    if (args.length < 2) {
        console.error('usage: node tools/ort_case.js MODEL.onnx OUTDIR [INPUT.pb|-]...');
        process.exit(1);
    }
    const [model, outdir, ...given] = args;
    const session = await ort.InferenceSession.create(model);
    const metas = session.inputMetadata || session.inputNames.map((name) => ({ name }));
    const feeds = {}, inputs = [];
    session.inputNames.forEach((name, k) => {
        let t;
        if (k < given.length && given[k] !== '-') t = decodeTensor(fs.readFileSync(given[k])).tensor;
        else t = randomTensor(metas.find((m) => m.name === name));
        feeds[name] = t;
        inputs.push([name, t]);
    });
    const results = await session.run(feeds);
    const dir = path.join(outdir, 'test_data_set_0');
    fs.mkdirSync(dir, { recursive: true });
    if (path.resolve(model) !== path.resolve(path.join(outdir, 'model.onnx')))
        fs.copyFileSync(model, path.join(outdir, 'model.onnx'));
    inputs.forEach(([name, t], k) => fs.writeFileSync(path.join(dir, `input_${k}.pb`), encodeTensor(name, t)));
    session.outputNames.forEach((name, k) => fs.writeFileSync(path.join(dir, `output_${k}.pb`), encodeTensor(name, results[name])));
    console.log(`${inputs.length} inputs, ${session.outputNames.length} outputs from onnxruntime ${ort.env.versions ? ort.env.versions.common : ''}`);
}

main().catch((e) => {
    console.error('ort_case: ' + (e && e.message ? e.message : e));
    process.exit(1);
});
