// Runs pairs of ONNX models (original, optimized) with onnxruntime-node on
// the same inputs and compares the outputs. Dev-time only (bench/opt_check.sh).
//
//   node bench/ort_compare.js MANIFEST
//
// MANIFEST: one line per pair, tab-separated: ORIGINAL OPTIMIZED [INPUT.pb ...].
// Without input files, inputs are generated from the model's declared
// types (dynamic dims 8, small non-negative integers so that indices stay
// in range). Prints one line per pair (OK, FAIL, or SKIP when onnxruntime
// cannot run the original or the original is random) and ends with
// "N passed, M failed, K skipped".
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');
const OPTS = {logSeverityLevel: 4};

// ---- a TensorProto reader (the fields the backend test data uses) ----------------------
const TYPES = {1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
               9: 'bool', 11: 'float64', 12: 'uint32', 13: 'uint64'};
const ARRAYS = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
                int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float64: Float64Array,
                uint32: Uint32Array, uint64: BigUint64Array};

function varint(buf, pos) {
  let x = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos.i++];
    x |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return x;
    shift += 7n;
  }
}

function readTensor(path) {
  const buf = fs.readFileSync(path);
  const pos = {i: 0};
  const t = {dims: [], type: 0, name: '', raw: null, f32: [], i32: [], i64: [], f64: [], u64: [], str: []};
  const packed = (wire, end, fn) => {
    if (wire === 2) {
      const len = Number(varint(buf, pos)), stop = pos.i + len;
      while (pos.i < stop) fn();
    } else fn();
  };
  while (pos.i < buf.length) {
    const key = Number(varint(buf, pos)), field = key >> 3, wire = key & 7;
    if (field === 1) packed(wire, 0, () => t.dims.push(Number(BigInt.asIntN(64, varint(buf, pos)))));
    else if (field === 2) t.type = Number(varint(buf, pos));
    else if (field === 4) packed(wire, 0, () => { t.f32.push(buf.readFloatLE(pos.i)); pos.i += 4; });
    else if (field === 5) packed(wire, 0, () => t.i32.push(Number(BigInt.asIntN(32, varint(buf, pos)))));
    else if (field === 7) packed(wire, 0, () => t.i64.push(BigInt.asIntN(64, varint(buf, pos))));
    else if (field === 10) packed(wire, 0, () => { t.f64.push(buf.readDoubleLE(pos.i)); pos.i += 8; });
    else if (field === 11) packed(wire, 0, () => t.u64.push(BigInt.asUintN(64, varint(buf, pos))));
    else if (field === 6 || field === 8 || field === 9 || wire === 2) {
      const len = Number(varint(buf, pos)), bytes = buf.subarray(pos.i, pos.i + len);
      pos.i += len;
      if (field === 6) t.str.push(bytes.toString());
      else if (field === 8) t.name = bytes.toString();
      else if (field === 9) t.raw = Buffer.from(bytes);
    } else if (wire === 0) varint(buf, pos);
    else if (wire === 1) pos.i += 8;
    else if (wire === 5) pos.i += 4;
    else throw new Error('unsupported wire type ' + wire);
  }
  const type = TYPES[t.type];
  if (!type) throw new Error('tensor type ' + t.type + ' not supported here');
  const n = t.dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') data = t.str;
  else if (t.raw) {
    const A = ARRAYS[type];
    data = new A(n);
    new Uint8Array(data.buffer).set(t.raw.subarray(0, n * A.BYTES_PER_ELEMENT));
  } else {
    const src = type === 'float32' ? t.f32 : type === 'float64' ? t.f64 : type === 'int64' ? t.i64
              : type === 'uint64' || type === 'uint32' ? t.u64 : t.i32;
    data = new ARRAYS[type](n);
    for (let i = 0; i < n; i++) data[i] = type === 'uint32' ? Number(src[i]) : src[i];
  }
  return {name: t.name, tensor: new ort.Tensor(type, data, t.dims)};
}

// ---- generated inputs -------------------------------------------------------------------
function generate(meta, k) {
  const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 8));
  const n = dims.reduce((a, b) => a * b, 1), A = ARRAYS[meta.type];
  if (!A) throw new Error('input type ' + meta.type + ' not generated here');
  const data = new A(n);
  for (let i = 0; i < n; i++) {
    const x = Math.sin((i * 7 + k * 3) * 0.37);
    if (meta.type === 'float32' || meta.type === 'float64') data[i] = x;
    else if (meta.type === 'int64' || meta.type === 'uint64') data[i] = BigInt((i * 3 + k) % 4);
    else if (meta.type === 'bool') data[i] = i % 2;
    else data[i] = (i * 3 + k) % 4;
  }
  return new ort.Tensor(meta.type, data, dims);
}

async function feedsFor(session, files) {
  const feeds = {};
  if (files.length) {
    files.forEach((f, k) => {
      const {name, tensor} = readTensor(f);
      feeds[session.inputNames.includes(name) ? name : session.inputNames[k]] = tensor;
    });
  } else {
    session.inputMetadata.forEach((m, k) => { feeds[m.name] = generate(m, k); });
  }
  return feeds;
}

function same(a, b) {
  if (a.type !== b.type || a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i]))
    return 'type or shape ' + a.type + '[' + a.dims + '] vs ' + b.type + '[' + b.dims + ']';
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i], y = b.data[i];
    if (typeof x === 'number') {
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      if (!(Math.abs(x - y) <= 1e-4 + 1e-3 * Math.abs(x)) && x !== y) return 'element ' + i + ': ' + x + ' vs ' + y;
    } else if (x !== y) return 'element ' + i + ': ' + x + ' vs ' + y;
  }
  return null;
}

async function comparePair(orig, opt, files) {
  let s1, s2, feeds, r1, r1b;
  try {
    s1 = await ort.InferenceSession.create(orig, OPTS);
    feeds = await feedsFor(s1, files);
    r1 = await s1.run(feeds);
    r1b = await s1.run(feeds);
  } catch (e) {
    return ['SKIP', 'onnxruntime cannot run the original: ' + String(e.message || e).split('\n')[0]];
  }
  for (const k of s1.outputNames)
    if (same(r1[k], r1b[k])) return ['SKIP', 'random outputs'];
  try {
    s2 = await ort.InferenceSession.create(opt, OPTS);
  } catch (e) {
    return ['FAIL', 'onnxruntime rejects the optimized model: ' + String(e.message || e).split('\n')[0]];
  }
  if (s2.outputNames.join() !== s1.outputNames.join()) return ['FAIL', 'outputs ' + s2.outputNames + ' vs ' + s1.outputNames];
  let r2;
  try {
    r2 = await s2.run(feeds);
  } catch (e) {
    return ['FAIL', 'optimized model fails: ' + String(e.message || e).split('\n')[0]];
  }
  for (const k of s1.outputNames) {
    const why = same(r1[k], r2[k]);
    if (why) return ['FAIL', 'output ' + k + ': ' + why];
  }
  return ['OK', ''];
}

async function main() {
  const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim());
  let pass = 0, fail = 0, skip = 0;
  for (const line of lines) {
    const [orig, opt, ...files] = line.split('\t').filter((x) => x);
    const [verdict, why] = await comparePair(orig, opt, files);
    if (verdict === 'OK') pass++;
    else if (verdict === 'FAIL') fail++;
    else skip++;
    if (verdict !== 'OK' || process.env.VERBOSE) console.log(verdict + ' ' + orig + (why ? ': ' + why : ''));
  }
  console.log(pass + ' passed, ' + fail + ' failed, ' + skip + ' skipped');
  process.exit(fail ? 1 : 0);
}

main();
