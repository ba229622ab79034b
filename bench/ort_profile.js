// onnxruntime-node's kernel time by op kind (session option enableProfiling),
// ms per run, to set beside `interp bench MODEL --profile`: inputs as
// bench/ort_bench.js makes them (symbolic dims 1), after one warm-up run.
//   node bench/ort_profile.js MODEL ITERS [threads=T] [nodes=1]
// nodes=1 also prints one line per node (ms per run, op, name).
// onnxruntime's own fusions show under its names (Conv with its activation,
// efficientnet's SiLU as QuickGelu, NCHWc reorders as ReorderInput/Output).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require(path.join(__dirname, '.ort', 'node_modules', 'onnxruntime-node'));

function inputs(s) {
  const feeds = {};
  for (const meta of s.inputMetadata) {
    const shape = meta.shape.map(d => (typeof d === 'number' ? d : 1));
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = ((i * 2654435761) % 1000) / 250 - 2;
    feeds[meta.name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

function report(file, runs, nodes) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byOp = new Map(), byNode = new Map();
  const starts = events.filter(e => e.name === 'model_run').map(e => e.ts).sort((a, b) => a - b);
  let total = 0;
  for (const e of events) {
    /* the warm-up run's nodes (before the second model_run) */
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < starts[1]) continue;
    const op = e.args.op_name, name = e.name.replace(/_kernel_time$/, '');
    const o = byOp.get(op) || {us: 0, n: 0};
    o.us += e.dur;
    o.n++;
    byOp.set(op, o);
    byNode.set(name, {op, us: (byNode.has(name) ? byNode.get(name).us : 0) + e.dur});
    total += e.dur;
  }
  console.log('kernels ' + (total / 1000 / runs).toFixed(3) + ' ms per run');
  for (const [op, o] of [...byOp].sort((a, b) => b[1].us - a[1].us))
    console.log((o.us / 1000 / runs).toFixed(3).padStart(9) + ' ms ' + (100 * o.us / total).toFixed(1).padStart(5) +
                '% ' + String(o.n / runs).padStart(4) + '  ' + op);
  if (nodes)
    for (const [name, o] of byNode) console.log('node ' + (o.us / 1000 / runs).toFixed(4) + ' ' + o.op + ' ' + name);
}

async function main() {
  const [model, itersArg, ...rest] = process.argv.slice(2);
  const iters = parseInt(itersArg || '20', 10);
  let threads = 1, nodes = false;
  for (const a of rest) {
    const [k, v] = a.split('=');
    if (k === 'threads') threads = parseInt(v, 10);
    else if (k === 'nodes') nodes = v === '1';
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));
  const s = await ort.InferenceSession.create(model, {intraOpNumThreads: threads, interOpNumThreads: 1,
                                                     executionMode: 'sequential', enableProfiling: true,
                                                     profileFilePrefix: path.join(dir, 'p')});
  const feeds = inputs(s);
  for (let i = 0; i <= iters; i++) await s.run(feeds);
  s.endProfiling();
  const file = fs.readdirSync(dir).map(f => path.join(dir, f))[0];
  report(file, iters, nodes);
  fs.rmSync(dir, {recursive: true});
}
main().catch(e => { console.error('ort_profile: ' + e.message); process.exit(1); });
