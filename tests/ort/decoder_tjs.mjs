// Greedy generation with transformers.js (@huggingface/transformers, pinned; it runs on
// onnxruntime-node) from a decoder package directory, offline.
//
//   node tests/ort/decoder_tjs.mjs PACKAGE_DIR IDS MAX_NEW_TOKENS
//
// IDS: the prompt's token ids, comma-separated. Prints the whole sequence (prompt and generated
// ids) as one JSON array. Exits 1 with the library's message on any error.
import { createRequire } from 'node:module';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', '..', 'package.json'));
const [dir, ids, maxNew] = process.argv.slice(2);
if (!maxNew) {
  process.stderr.write('usage: decoder_tjs.mjs PACKAGE_DIR IDS MAX_NEW_TOKENS\n');
  process.exit(2);
}
try {
  const { AutoModelForCausalLM, Tensor, env } =
    await import(require.resolve('@huggingface/transformers'));
  env.allowRemoteModels = false;
  const model = await AutoModelForCausalLM.from_pretrained(path.resolve(dir),
    { local_files_only: true, dtype: 'fp32', device: 'cpu' });
  const prompt = BigInt64Array.from(ids.split(',').map(BigInt));
  const input_ids = new Tensor('int64', prompt, [1, prompt.length]);
  const attention_mask = new Tensor('int64', new BigInt64Array(prompt.length).fill(1n),
    [1, prompt.length]);
  const out = await model.generate({ input_ids, attention_mask, max_new_tokens: Number(maxNew),
    do_sample: false });
  process.stdout.write(JSON.stringify(out.tolist()[0].map(Number)) + '\n');
} catch (e) {
  process.stderr.write(`decoder_tjs: ${e.stack ?? e}\n`);
  process.exit(1);
}
