// Times a decoder package in onnxruntime-node (CPU): session creation (with its peak RSS), a
// prefill of PROMPT tokens, then STEPS single-token steps through the KV cache. Prints
// {"session_s": S, "rss_mib": R, "prefill_s": P, "step_s": [..]} on stdout.
//
//   node bench/decoder_ort_bench.mjs MODEL.onnx LAYERS KV_HEADS HEAD_DIM PROMPT STEPS THREADS
import { createRequire } from 'node:module';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const ort = createRequire(path.join(here, '..', 'package.json'))('onnxruntime-node');
const [model, layers, kvHeads, headDim, prompt, steps, threads] = process.argv.slice(2);
const secs = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
try {
  const opts = {};
  if (Number(threads) > 0) opts.intraOpNumThreads = Number(threads);
  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, opts);
  const session_s = secs(t0);
  const rss_mib = process.resourceUsage().maxRSS / 1024;
  const ids = (n, start) => new ort.Tensor('int64',
    BigInt64Array.from({ length: n }, (_, i) => BigInt((start + i * 7919) % 31000 + 3)), [1, n]);
  const range = (n, start) => new ort.Tensor('int64',
    BigInt64Array.from({ length: n }, (_, i) => BigInt(start + i)), [1, n]);
  const ones = (n) => new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]);
  let past = {};
  for (let i = 0; i < Number(layers); ++i)
    for (const kv of ['key', 'value'])
      past[`past_key_values.${i}.${kv}`] = new ort.Tensor('float32', new Float32Array(0),
        [1, Number(kvHeads), 0, Number(headDim)]);
  const run = async (n, pos) => {
    const out = await session.run({ ...past, input_ids: ids(n, pos), position_ids: range(n, pos),
      attention_mask: ones(pos + n) });
    past = {};
    for (const [name, t] of Object.entries(out))
      if (name.startsWith('present.')) past['past_key_values.' + name.slice(8)] = t;
  };
  t0 = process.hrtime.bigint();
  await run(Number(prompt), 0);
  const prefill_s = secs(t0);
  const step_s = [];
  for (let s = 0; s < Number(steps); ++s) {
    t0 = process.hrtime.bigint();
    await run(1, Number(prompt) + s);
    step_s.push(secs(t0));
  }
  process.stdout.write(JSON.stringify({ session_s, rss_mib, prefill_s, step_s }) + '\n');
} catch (e) {
  process.stderr.write(`decoder_ort_bench: ${e.message ?? e}\n`);
  process.exit(1);
}
