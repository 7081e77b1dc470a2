// Tokenizes texts from a directory holding tokenizer.json and tokenizer_config.json, offline, with
// one of two clients of Hugging Face's format (both pinned in package.json):
//
//   transformers.js  @huggingface/transformers (its JavaScript tokenizers engine);
//   tokenizers       Hugging Face's Rust tokenizers through its Node binding (the npm package
//                    tokenizers, prebuilt): the reference semantics of tokenizer.json.
//
//   node tests/tokenizer/tokenize.mjs DIR [CLIENT] < REQUEST.json     (CLIENT: transformers.js)
//
// REQUEST: {"texts": [...], "add_special": [false, true]}. Prints one JSON object:
// {"ids": [[ids of text 0 for each add_special value], ...], "decoded": [decode of the ids of
// text 0 without special tokens, ...]}. Exits 1 with the library's message on any error.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', '..', 'package.json'));
const [dir, client = 'transformers.js'] = process.argv.slice(2);
if (!dir || !['transformers.js', 'tokenizers'].includes(client)) {
  process.stderr.write('usage: tokenize.mjs DIR [transformers.js|tokenizers] < REQUEST.json\n');
  process.exit(2);
}

// encode(text, add_special) -> ids; decode(ids) -> text (special tokens kept).
async function load() {
  if (client === 'tokenizers') {
    const { Tokenizer } = require('tokenizers');
    const tokenizer = Tokenizer.fromFile(path.join(path.resolve(dir), 'tokenizer.json'));
    return {
      encode: async (text, add) =>
        (await tokenizer.encode(text, null, { addSpecialTokens: add })).getIds(),
      decode: (ids) => tokenizer.decode(ids, false),
    };
  }
  const { AutoTokenizer, env } = await import(require.resolve('@huggingface/transformers'));
  env.allowRemoteModels = false;
  const tokenizer = await AutoTokenizer.from_pretrained(path.resolve(dir),
    { local_files_only: true });
  return {
    encode: async (text, add) => tokenizer.encode(text, { add_special_tokens: add }),
    decode: async (ids) => tokenizer.decode(ids, { skip_special_tokens: false }),
  };
}

try {
  const request = JSON.parse(fs.readFileSync(0, 'utf8'));
  const tokenizer = await load();
  const ids = [], decoded = [];
  for (const text of request.texts) {
    const each = [];
    for (const add of request.add_special) each.push(await tokenizer.encode(text, add));
    ids.push(each);
    decoded.push(each[0].length ? await tokenizer.decode(each[0]) : "");
  }
  process.stdout.write(JSON.stringify({ ids, decoded }) + '\n');
} catch (e) {
  process.stderr.write(`tokenize (${client}): ${e.stack ?? e}\n`);
  process.exit(1);
}
