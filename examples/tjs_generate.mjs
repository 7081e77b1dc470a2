// Greedy generation with transformers.js (Node), offline, from a gguftool decoder package.
import { AutoModelForCausalLM, Tensor } from '@huggingface/transformers';
const [dir, prompt] = process.argv.slice(2);
const model = await AutoModelForCausalLM.from_pretrained(dir, { local_files_only: true });
const ids = BigInt64Array.from(prompt.split(',').map(BigInt));
const out = await model.generate({ input_ids: new Tensor('int64', ids, [1, ids.length]),
  attention_mask: new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
  max_new_tokens: 6, do_sample: false });
console.log(out.tolist()[0].join(' '));
