// Greedy generation with transformers.js (Node), offline, from a gguftool decoder package: its
// tokenizer.json and its ONNX model.
import { AutoModelForCausalLM, AutoTokenizer } from '@huggingface/transformers';
const [dir, prompt] = process.argv.slice(2);
const tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
const model = await AutoModelForCausalLM.from_pretrained(dir, { local_files_only: true });
const inputs = tokenizer(prompt);
const out = await model.generate({ ...inputs, max_new_tokens: 6, do_sample: false });
console.log(out.tolist()[0].join(' '));
console.log(JSON.stringify(tokenizer.decode(out[0], { skip_special_tokens: true })));
