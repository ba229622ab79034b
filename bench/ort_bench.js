// Median latency of onnxruntime-node (one thread) on a model, inputs random
// float32 with symbolic dims bound by NAME=VALUE arguments; integer inputs
// get values in [0, N) with int=N (valid token ids; default 1: zeros), the
// pattern pfvm's `interp bench` uses. threads=T runs T intra-op threads.
//   node bench/ort_bench.js MODEL ITERS [NAME=VALUE]... [int=N] [threads=T]
// Prints "median X ms (min Y)". onnxruntime-node is installed by bench/fusion.sh
// into bench/.ort (git-ignored).
const path = require('path');
const ort = require(path.join(__dirname, '.ort', 'node_modules', 'onnxruntime-node'));

async function main() {
  const [model, itersArg, ...dimArgs] = process.argv.slice(2);
  const iters = parseInt(itersArg || '10', 10);
  const dims = {};
  let intBound = 1, threads = 1;
  for (const a of dimArgs) {
    const [k, v] = a.split('=');
    if (k === 'int') intBound = parseInt(v, 10);
    else if (k === 'threads') threads = parseInt(v, 10);
    else dims[k] = parseInt(v, 10);
  }
  const s = await ort.InferenceSession.create(model, {intraOpNumThreads: threads, interOpNumThreads: 1,
                                                     executionMode: 'sequential'});
  const feeds = {};
  for (const meta of s.inputMetadata) {
    const shape = meta.shape.map(d => (typeof d === 'number' ? d : dims[d]));
    const n = shape.reduce((a, b) => a * b, 1);
    if (meta.type === 'int64') {
      const data = new BigInt64Array(n);
      for (let i = 0; i < n; i++) data[i] = (BigInt(i) * 2654435761n) % BigInt(intBound);
      feeds[meta.name] = new ort.Tensor('int64', data, shape);
      continue;
    }
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = ((i * 2654435761) % 1000) / 250 - 2;
    feeds[meta.name] = new ort.Tensor('float32', data, shape);
  }
  await s.run(feeds);
  const t = [];
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  console.log('median ' + t[Math.floor(iters / 2)].toFixed(3) + ' ms (min ' + t[0].toFixed(3) + ')');
}
main().catch(e => { console.error('ort_bench: ' + e.message); process.exit(1); });
