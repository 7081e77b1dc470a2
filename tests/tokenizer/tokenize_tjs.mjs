// Tokenizes texts with transformers.js (@huggingface/transformers, pinned) from a directory holding
// tokenizer.json and tokenizer_config.json, offline.
//
//   node tests/tokenizer/tokenize_tjs.mjs DIR < REQUEST.json
//
// REQUEST: {"texts": [...], "add_special": [false, true]}. Prints one JSON object:
// {"ids": [[ids of text 0 for each add_special value], ...], "decoded": [decode of the ids of
// text 0 without special tokens, ...]}. Exits 1 with the library's message on any error.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', '..', 'package.json'));
const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: tokenize_tjs.mjs DIR < REQUEST.json\n');
  process.exit(2);
}
try {
  const request = JSON.parse(fs.readFileSync(0, 'utf8'));
  const { AutoTokenizer, env } = await import(require.resolve('@huggingface/transformers'));
  env.allowRemoteModels = false;
  const tokenizer = await AutoTokenizer.from_pretrained(path.resolve(dir),
    { local_files_only: true });
  const ids = [], decoded = [];
  for (const text of request.texts) {
    ids.push(request.add_special.map(
      (add) => tokenizer.encode(text, { add_special_tokens: add })));
    const first = ids[ids.length - 1][0];
    decoded.push(first.length ? tokenizer.decode(first, { skip_special_tokens: false }) : "");
  }
  process.stdout.write(JSON.stringify({ ids, decoded }) + '\n');
} catch (e) {
  process.stderr.write(`tokenize_tjs: ${e.stack ?? e}\n`);
  process.exit(1);
}
