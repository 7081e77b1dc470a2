// Times onnxruntime (onnxruntime-node, CPU) on a model without inputs: session creation, one
// warm-up run, then REPS timed runs. Prints {"session_ms": S, "run_ms": [R, ...]} on stdout.
//
//   node bench/ort_bench.mjs MODEL.onnx THREADS REPS [--no-fold] [--out FILE]
//
// THREADS is intraOpNumThreads (0: onnxruntime's default, all cores). --no-fold turns off
// onnxruntime's constant folding, which would otherwise decode a model whose only data are
// initializers while the session is created, leaving the runs nothing to do. --out writes the
// first output's raw bytes (little-endian, C order) to FILE. On an error prints onnxruntime's
// message on stderr and exits 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';

function fail(message) {
  process.stderr.write(`ort_bench: ${message}\n`);
  process.exit(1);
}

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function main() {
  const args = process.argv.slice(2);
  const flag = (name) => {
    const i = args.indexOf(name);
    return i < 0 ? undefined : args.splice(i, name === '--out' ? 2 : 1)[name === '--out' ? 1 : 0];
  };
  const out = flag('--out');
  const noFold = flag('--no-fold') !== undefined;
  const [model, threadsArg, repsArg] = args;
  const threads = Number(threadsArg), reps = Number(repsArg);
  if (!model || !Number.isInteger(threads) || threads < 0 || !Number.isInteger(reps) || reps < 1)
    fail('usage: node ort_bench.mjs MODEL.onnx THREADS REPS [--no-fold] [--out FILE]');
  // Resolved from the project's node_modules (this script lives in bench/).
  const ort = createRequire(import.meta.url)('onnxruntime-node');
  const options = { executionProviders: ['cpu'] };
  if (threads > 0) options.intraOpNumThreads = threads;
  if (noFold) options.extra = { optimization: { disable_specified_optimizers: 'ConstantFolding' } };

  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, options);
  const sessionMs = ms(t0);
  const first = await session.run({});  // warm-up
  if (out) {
    const data = first[session.outputNames[0]].data;
    fs.writeFileSync(out, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  const runMs = [];
  for (let i = 0; i < reps; ++i) {
    t0 = process.hrtime.bigint();
    await session.run({});
    runMs.push(ms(t0));
  }
  console.log(JSON.stringify({ session_ms: sessionMs, run_ms: runMs }));
}

main().catch((e) => fail(e?.message ?? String(e)));
