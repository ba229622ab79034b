// Runs a model in onnxruntime-node (one thread) over raw float32 inputs for
// bench/int8.sh: for each FILE.bin (the input, shape SHAPE as d0,d1,...)
// prints output 0's values on one line. With ORT_NOOPT=1 the graph
// optimizations are off: onnxruntime then runs the QDQ file as written
// (DequantizeLinear -> float Conv -> QuantizeLinear), the format's reference
// meaning, instead of its fused integer kernels.
//   node bench/int8_ort.js MODEL SHAPE FILE.bin...
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '.ort', 'node_modules', 'onnxruntime-node'));

async function main() {
  const [model, shapeArg, ...files] = process.argv.slice(2);
  const shape = shapeArg.split(',').map(Number);
  const opts = {intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential'};
  if (process.env.ORT_NOOPT === '1') opts.graphOptimizationLevel = 'disabled';
  const s = await ort.InferenceSession.create(model, opts);
  const out = [];
  for (const f of files) {
    const b = fs.readFileSync(f);
    const data = new Float32Array(b.buffer, b.byteOffset, b.length / 4);
    const r = await s.run({[s.inputNames[0]]: new ort.Tensor('float32', data, shape)});
    out.push(Array.from(r[s.outputNames[0]].data).map(v => v.toPrecision(6)).join(' '));
  }
  console.log(out.join('\n'));
}
main().catch(e => { console.error('int8_ort: ' + e.message); process.exit(1); });
