// Times an encoder package in onnxruntime-node (CPU): session creation, then REPS runs of one
// batch (BATCH sequences of SEQ tokens). Prints {"session_s": S, "run_s": [..]} on stdout.
//
//   node bench/encoder_ort_bench.mjs MODEL.onnx BATCH SEQ REPS THREADS
import { createRequire } from 'node:module';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const ort = createRequire(path.join(here, '..', 'package.json'))('onnxruntime-node');
const [model, batch, seq, reps, threads] = process.argv.slice(2).map((v, i) => i ? Number(v) : v);
const secs = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
try {
  const opts = {};
  if (threads > 0) opts.intraOpNumThreads = threads;
  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, opts);
  const session_s = secs(t0);
  const n = batch * seq;
  // The benchmark's ids (bench/encoder.cpp, batch_ids): [CLS] words [SEP].
  const ids = BigInt64Array.from({ length: n }, (_, k) => {
    const i = k % seq, b = Math.floor(k / seq);
    return BigInt(i == 0 ? 101 : i == seq - 1 ? 102 : 1000 + (b * 7919 + i * 104729) % 29000);
  });
  const feeds = {
    input_ids: new ort.Tensor('int64', ids, [batch, seq]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [batch, seq]),
  };
  if (session.inputNames.includes('token_type_ids'))
    feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(n), [batch, seq]);
  await session.run(feeds);  // warm-up
  const run_s = [];
  for (let r = 0; r < reps; ++r) {
    t0 = process.hrtime.bigint();
    await session.run(feeds);
    run_s.push(secs(t0));
  }
  process.stdout.write(JSON.stringify({ session_s, run_s }) + '\n');
} catch (e) {
  process.stderr.write(`encoder_ort_bench: ${e.message ?? e}\n`);
  process.exit(1);
}
