// onnx_run.js — runs an ONNX model in ONNX Runtime (the onnxruntime-node package) on raw float32
// inputs, for tests/export: node onnx_run.js MODEL INPUT.f32 N C H W OUTPUT.f32
// INPUT.f32 holds N*C*H*W little-endian float32 values (NCHW); OUTPUT.f32 receives the model's
// "output" tensor as little-endian float32. The package is found through NODE_PATH.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, input, n, c, h, w, output] = process.argv.slice(2);
  const dims = [n, c, h, w].map(Number);
  const bytes = fs.readFileSync(input);
  const values = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const session = await ort.InferenceSession.create(model);
  const result = await session.run({ input: new ort.Tensor('float32', values, dims) });
  const out = result.output.data;
  fs.writeFileSync(output, Buffer.from(out.buffer, out.byteOffset, out.length * 4));
}

main().catch((e) => {
  console.error('onnx_run.js: ' + (e && e.message ? e.message : e));
  process.exit(1);
});
