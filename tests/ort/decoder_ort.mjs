// Runs a decoder package's model (to-onnx --graph decoder) in onnxruntime-node through its KV
// cache: step 0 with an empty past, each later step with the previous step's present.* tensors.
//
//   node tests/ort/decoder_ort.mjs MODEL.onnx PLAN.json OUTDIR
//
// PLAN: {"layers": L, "kv_heads": Hkv, "head_dim": D,
//        "steps": [{"input_ids": [[...], ...], "attention_mask": [[...]], "position_ids": [[...]]}, ...]}
// Writes OUTDIR/logits_<step>.f32 (raw little-endian float32, [batch, seq, vocab]) and prints
// "step <i> <dims>" per step. Exits 1 with onnxruntime's message on any error.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const ort = createRequire(path.join(here, '..', '..', 'package.json'))('onnxruntime-node');

const [modelPath, planPath, outDir] = process.argv.slice(2);
if (!outDir) {
  process.stderr.write('usage: decoder_ort.mjs MODEL.onnx PLAN.json OUTDIR\n');
  process.exit(2);
}
try {
  const plan = JSON.parse(fs.readFileSync(planPath, 'utf8'));
  const session = await ort.InferenceSession.create(modelPath);
  const int64 = (rows) => new ort.Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)),
    [rows.length, rows[0].length]);
  let past = {};
  const batch = plan.steps[0].input_ids.length;
  for (let i = 0; i < plan.layers; ++i)
    for (const kv of ['key', 'value'])
      past[`past_key_values.${i}.${kv}`] =
        new ort.Tensor('float32', new Float32Array(0), [batch, plan.kv_heads, 0, plan.head_dim]);
  fs.mkdirSync(outDir, { recursive: true });
  for (const [s, step] of plan.steps.entries()) {
    const feeds = { ...past, input_ids: int64(step.input_ids),
      attention_mask: int64(step.attention_mask), position_ids: int64(step.position_ids) };
    const out = await session.run(feeds);
    const logits = out.logits;
    fs.writeFileSync(path.join(outDir, `logits_${s}.f32`),
      Buffer.from(logits.data.buffer, logits.data.byteOffset, logits.data.byteLength));
    past = {};
    for (const [name, t] of Object.entries(out))
      if (name.startsWith('present.')) past['past_key_values.' + name.slice(8)] = t;
    process.stdout.write(`step ${s} ${logits.dims.join('x')}\n`);
  }
} catch (e) {
  process.stderr.write(`decoder_ort: ${e.message ?? e}\n`);
  process.exit(1);
}
