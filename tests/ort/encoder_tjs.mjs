// An encoder package (to-onnx --graph encoder) in transformers.js (@huggingface/transformers,
// pinned; onnxruntime-node underneath), offline: the feature-extraction pipeline with the pooling
// and normalisation the package's sentence-transformers files name, and the model's raw outputs.
//
//   node tests/ort/encoder_tjs.mjs PACKAGE_DIR TEXTS_JSON
//
// TEXTS_JSON: a JSON array of strings, run as one padded batch. Prints one JSON object: ids (each
// text's token ids, padding dropped), pipeline (the pooled, normalised vectors), sentence (the
// graph's sentence_embedding rows, when it has that output). Exits 1 with the library's message on
// any error.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', '..', 'package.json'));
const [dir, textsJson] = process.argv.slice(2);
if (!textsJson) {
  process.stderr.write('usage: encoder_tjs.mjs PACKAGE_DIR TEXTS_JSON\n');
  process.exit(2);
}
try {
  const { pipeline, env } = await import(require.resolve('@huggingface/transformers'));
  env.allowRemoteModels = false;
  const texts = JSON.parse(textsJson);
  const pooling = JSON.parse(fs.readFileSync(path.join(dir, '1_Pooling', 'config.json'), 'utf8'));
  const mode = pooling.pooling_mode_mean_tokens ? 'mean'
    : pooling.pooling_mode_cls_token ? 'cls'
    : pooling.pooling_mode_lasttoken ? 'last_token' : 'none';
  const normalize = fs.existsSync(path.join(dir, '2_Normalize'));
  const extractor = await pipeline('feature-extraction', path.resolve(dir),
    { local_files_only: true, dtype: 'fp32', device: 'cpu' });
  const embedded = await extractor(texts, { pooling: mode, normalize });
  const inputs = extractor.tokenizer(texts, { padding: true, truncation: true });
  const out = await extractor.model(inputs);
  const mask = inputs.attention_mask.tolist();
  const ids = inputs.input_ids.tolist().map((row, b) =>
    row.filter((_, i) => mask[b][i] == 1n).map(Number));
  const result = { ids, pipeline: embedded.tolist() };
  if (out.sentence_embedding) result.sentence = out.sentence_embedding.tolist();
  process.stdout.write(JSON.stringify(result) + '\n');
} catch (e) {
  process.stderr.write(`encoder_tjs: ${e.stack ?? e}\n`);
  process.exit(1);
}
