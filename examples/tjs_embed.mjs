// Sentence embeddings with transformers.js (Node), offline, from a gguftool encoder package: the
// feature-extraction pipeline, pooled as the package's 1_Pooling/config.json says, L2-normalised;
// prints each text's first values and the cosine similarity of the first text with each.
import { pipeline } from '@huggingface/transformers';
import fs from 'node:fs';
const [dir, ...texts] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(`${dir}/1_Pooling/config.json`, 'utf8'));
const pooling = p.pooling_mode_mean_tokens ? 'mean' : p.pooling_mode_cls_token ? 'cls' : 'last_token';
const extract = await pipeline('feature-extraction', dir, { local_files_only: true });
const v = (await extract(texts, { pooling, normalize: true })).tolist();
for (const [i, t] of texts.entries()) {
  const cos = v[i].reduce((s, x, j) => s + x * v[0][j], 0);
  console.log(`${JSON.stringify(t)}: [${v[i].slice(0, 3).map((x) => x.toFixed(4)).join(', ')}, ...] cosine with the first ${cos.toFixed(4)}`);
}
