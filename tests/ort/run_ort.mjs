// Runs an ONNX model in onnxruntime (onnxruntime-node, CPU, default session options) and writes
// every output as OUTDIR/<name>.npy.
//
//   node tests/ort/run_ort.mjs MODEL.onnx OUTDIR [NAME=INPUT.npy ...]
//
// Prints "<name> <type> [dims]" per output. On any error prints onnxruntime's message on stderr
// and exits 1. Inputs: .npy files of little-endian float32/float16/float64/int8..int64/uint8..
// uint64/bool, C order. A model with bfloat16 outputs is refused by onnxruntime-node itself.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

// onnxruntime tensor type <-> numpy descr (little-endian) and typed array.
const TYPES = {
  float32: ['<f4', Float32Array], float16: ['<f2', Uint16Array], float64: ['<f8', Float64Array],
  int8: ['|i1', Int8Array], int16: ['<i2', Int16Array], int32: ['<i4', Int32Array],
  int64: ['<i8', BigInt64Array], uint8: ['|u1', Uint8Array], uint16: ['<u2', Uint16Array],
  uint32: ['<u4', Uint32Array], uint64: ['<u8', BigUint64Array], bool: ['|b1', Uint8Array],
};

function fail(message) {
  process.stderr.write(`run_ort: ${message}\n`);
  process.exit(1);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (/'fortran_order':\s*True/.test(header)) fail(`${file}: Fortran order is not supported`);
  const type = Object.keys(TYPES).find((t) => TYPES[t][0] === descr);
  if (!type || shape === undefined) fail(`${file}: unsupported .npy header ${header.trim()}`);
  const dims = shape.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = buf.subarray(start + headerLen);
  const Array_ = TYPES[type][1];
  const copy = new Uint8Array(data); // aligned copy
  const values = new Array_(copy.buffer, 0, copy.byteLength / Array_.BYTES_PER_ELEMENT);
  return { type, dims, values };
}

function writeNpy(file, tensor) {
  const entry = TYPES[tensor.type];
  if (!entry) throw new Error(`output type ${tensor.type} has no .npy form here`);
  const dims = tensor.dims.map(String);
  const shape = dims.length === 1 ? `${dims[0]},` : dims.join(', ');
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n'; // data starts 64-aligned
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const [model, outdir, ...inputArgs] = process.argv.slice(2);
  if (!model || !outdir) fail('usage: node run_ort.mjs MODEL.onnx OUTDIR [NAME=INPUT.npy ...]');
  // Resolved from the project's node_modules (this script lives in tests/ort/).
  const ort = createRequire(import.meta.url)('onnxruntime-node');
  const feeds = {};
  for (const arg of inputArgs) {
    const eq = arg.indexOf('=');
    if (eq <= 0) fail(`input "${arg}" is not NAME=FILE.npy`);
    const { type, dims, values } = readNpy(arg.slice(eq + 1));
    feeds[arg.slice(0, eq)] = new ort.Tensor(type, values, dims);
  }
  const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
  const results = await session.run(feeds);
  fs.mkdirSync(outdir, { recursive: true });
  for (const name of session.outputNames) {
    const t = results[name];
    writeNpy(path.join(outdir, `${name}.npy`), t);
    console.log(`${name} ${t.type} [${t.dims.join(', ')}]`);
  }
}

// onnxruntime-node has no bfloat16 tensors: it loads such a model natively, then refuses its
// output list with this message. Say what it means.
const BFLOAT16_REFUSED = 'Unsupported data type: 16';

main().catch((e) => {
  const message = e?.message ?? String(e);
  fail(message.includes(BFLOAT16_REFUSED)
    ? `${message} (bfloat16: onnxruntime-node cannot hand back bfloat16 tensors; ` +
      'write the model with --output-dtype float, float16 or double)'
    : message);
});
