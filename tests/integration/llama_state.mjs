// Real llama.cpp (release v0.4.0, the prebuilt CPU build of node-llama-cpp 3.21.1) writes
// and loads sequence state files, so statezip's output can be proven usable, not only equal.
//
//   node llama_state.mjs save  MODEL STATE REF.json   evaluate a prompt of NLS_TOKENS tokens on
//        sequence 0, write the sequence state (llama_state_seq_save_file), then feed one more
//        token and record the next-token probabilities of NLS_GEN greedy steps into REF.json
//   node llama_state.mjs check MODEL REF.json STATE...  in this (fresh) process, load each STATE
//        into a fresh context (llama_state_seq_load_file), feed the same token and require
//        bit-identical probabilities at every step. Exit 0 only if every file matches.
//   node llama_state.mjs compare MODEL STATE_A STATE_B  load both (fresh contexts), feed the
//        last token of A's token list to each, require bit-identical probabilities (a user's
//        own file, where no reference run exists).
//   node llama_state.mjs lossy MODEL ORIGINAL RESTORED   the error of a lossy restore: load each
//        in a fresh context, feed both the last token of ORIGINAL's list and then, for NLS_GEN
//        steps, ORIGINAL's greedy tokens (teacher forcing); report per-step KL(orig || restored),
//        top-1 agreement and the largest difference of log-probabilities (the logits up to the
//        per-step normalisation). Fails when NLS_REQUIRE_IDENTICAL=1 and any probability differs,
//        when the mean KL exceeds NLS_MAX_MEAN_KL, or top-1 agreement is below NLS_MIN_TOP1.
//
// Env: NLS_KV_TYPE (F16, BF16, F32, Q8_0, Q4_0, ...), NLS_FLASH_ATTN (0|1), NLS_CTX (default 2048),
//      NLS_TOKENS (default 300), NLS_GEN (default 32). One thread, so results are deterministic.
import fs from "node:fs";
import crypto from "node:crypto";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const KV_TYPE = process.env.NLS_KV_TYPE ?? "F16";
const FLASH_ATTN = (process.env.NLS_FLASH_ATTN ?? "0") === "1";
const CTX = Number(process.env.NLS_CTX ?? 2048);
const N_TOKENS = Number(process.env.NLS_TOKENS ?? 300);
const N_GEN = Number(process.env.NLS_GEN ?? 32);

const STORY =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her " +
    "friends. One day, she saw a big red ball under a tree. She wanted to play with it, but it was not hers. " +
    "Lily asked her mom, \"Can I play with the ball?\" Her mom said, \"Yes, but you must give it back when you " +
    "are done.\" Lily was very happy. She played with the ball all day long. When the sun went down, she gave " +
    "the ball back to the boy who owned it. The boy smiled and said, \"Thank you, Lily. You are a good friend.\" " +
    "From that day on, Lily and the boy played together in the park every day. They were the best of friends. ";

async function open(modelPath) {
    const llama = await getLlama({gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
                                  logLevel: LlamaLogLevel.error});
    const model = await llama.loadModel({modelPath, gpuLayers: 0});
    return {llama, model};
}

async function sequenceOf(model) {
    const context = await model.createContext({
        contextSize: CTX, sequences: 1, batchSize: 512, threads: 1, flashAttention: FLASH_ATTN,
        experimentalKvCacheKeyType: KV_TYPE, experimentalKvCacheValueType: KV_TYPE});
    return {context, sequence: context.getSequence()};
}

// N_TOKENS prompt tokens (BOS first) plus the token fed after the state is restored.
function promptTokens(model) {
    let text = STORY, toks = [];
    for (;;) {
        toks = model.tokenize(text);
        if (model.tokens.bos != null) toks = [model.tokens.bos, ...toks];
        if (toks.length > N_TOKENS) break;
        text += STORY;
    }
    return toks.slice(0, N_TOKENS + 1);
}

async function probe(model, sequence, token) {
    const nVocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const h = crypto.createHash("sha256");
    const greedy = [];
    for (let i = 0; i < N_GEN; i++) {
        const [res] = await sequence.controlledEvaluate([[token, {generateNext: {token: true, probabilities: true}}]]);
        const probs = new Float32Array(nVocab).fill(-1);
        for (const [id, p] of res.next.probabilities) probs[id] = p;
        h.update(Buffer.from(probs.buffer));
        greedy.push(res.next.token);
        token = res.next.token;
    }
    return {greedy, probsSha256: h.digest("hex")};
}

async function save(model, statePath, refPath) {
    const {context, sequence} = await sequenceOf(model);
    const toks = promptTokens(model);
    const prefix = toks.slice(0, -1), last = toks.at(-1);
    await sequence.evaluateWithoutGeneratingNewTokens(prefix);
    await sequence.saveStateToFile(statePath);
    const out = await probe(model, sequence, last);
    await context.dispose();
    const ref = {kvType: KV_TYPE, flashAttention: FLASH_ATTN, prefixTokens: prefix.length, lastToken: last, ...out};
    fs.writeFileSync(refPath, JSON.stringify(ref));
    return ref;
}

async function check(model, refPath, statePath) {
    const ref = JSON.parse(fs.readFileSync(refPath, "utf8"));
    const {context, sequence} = await sequenceOf(model);
    await sequence.loadStateFromFile(statePath, {acceptRisk: true});
    const restored = sequence.contextTokens.length;
    const got = await probe(model, sequence, ref.lastToken);
    await context.dispose();
    const ok = restored === ref.prefixTokens && got.probsSha256 === ref.probsSha256 &&
               JSON.stringify(got.greedy) === JSON.stringify(ref.greedy);
    return {state: statePath, ok, restoredTokens: restored, probsIdentical: got.probsSha256 === ref.probsSha256};
}

// Probability arrays of N_GEN steps: the first step after `token`; then each step fed
// forced[i] (teacher forcing) or, without `forced`, the greedy token.
async function probabilitySteps(model, sequence, token, forced) {
    const nVocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const steps = [];
    for (let i = 0; i < N_GEN; i++) {
        const [res] = await sequence.controlledEvaluate([[token, {generateNext: {token: true, probabilities: true}}]]);
        const probs = new Float64Array(nVocab);
        for (const [id, p] of res.next.probabilities) probs[id] = p;
        steps.push({probs, greedy: res.next.token});
        token = forced ? forced[i] : res.next.token;
    }
    return steps;
}

async function lossy(model, original, restored) {
    const load = async (path, forced, token) => {
        const {context, sequence} = await sequenceOf(model);
        await sequence.loadStateFromFile(path, {acceptRisk: true});
        const toks = sequence.contextTokens;
        const first = token ?? (toks.length ? toks.at(-1) : 1);
        const steps = await probabilitySteps(model, sequence, first, forced);
        await context.dispose();
        return {tokens: toks.length, first, steps};
    };
    const a = await load(original, null, null);
    const forced = a.steps.map(s => s.greedy);
    const b = await load(restored, forced, a.first);
    const perStepKL = [];
    let top1 = 0, maxAbsLogProbDiff = 0, identical = a.tokens === b.tokens;
    for (let i = 0; i < N_GEN; i++) {
        const p = a.steps[i].probs, q = b.steps[i].probs;
        let kl = 0, argmax = 0;
        for (let t = 0; t < p.length; t++) {
            if (q[t] > q[argmax]) argmax = t;
            if (p[t] !== q[t]) identical = false;
            if (p[t] > 0 && q[t] > 0) {
                kl += p[t] * Math.log(p[t] / q[t]);
                maxAbsLogProbDiff = Math.max(maxAbsLogProbDiff, Math.abs(Math.log(p[t]) - Math.log(q[t])));
            } else if (p[t] > 0) kl = Infinity;
        }
        perStepKL.push(kl);
        top1 += argmax === a.steps[i].greedy ? 1 : 0;
    }
    const meanKL = perStepKL.reduce((x, y) => x + y, 0) / N_GEN;
    return {original, restored, tokens: a.tokens, steps: N_GEN, identical, meanKL, maxKL: Math.max(...perStepKL),
            top1Agreement: top1 / N_GEN, maxAbsLogProbDiff, perStepKL};
}

const [mode, modelPath, ...rest] = process.argv.slice(2);
const {llama, model} = await open(modelPath);
let failed = false;
if (mode === "save") {
    const ref = await save(model, rest[0], rest[1]);
    console.log(JSON.stringify({saved: rest[0], prefixTokens: ref.prefixTokens, text: model.detokenize(ref.greedy)}));
} else if (mode === "check") {
    for (const st of rest.slice(1)) {
        const r = await check(model, rest[0], st);
        console.log(JSON.stringify(r));
        failed ||= !r.ok;
    }
} else if (mode === "compare") {
    const runs = [];
    for (const st of rest.slice(0, 2)) {
        const {context, sequence} = await sequenceOf(model);
        await sequence.loadStateFromFile(st, {acceptRisk: true});
        const toks = sequence.contextTokens;
        runs.push({tokens: toks.length, ...await probe(model, sequence, toks.length ? toks.at(-1) : 1)});
        await context.dispose();
    }
    const same = runs[0].tokens === runs[1].tokens && runs[0].probsSha256 === runs[1].probsSha256;
    console.log(JSON.stringify({a: rest[0], b: rest[1], tokens: runs[0].tokens, identical: same}));
    failed = !same;
} else if (mode === "lossy") {
    const r = await lossy(model, rest[0], rest[1]);
    console.log(JSON.stringify(r));
    const maxMeanKL = Number(process.env.NLS_MAX_MEAN_KL ?? Infinity), minTop1 = Number(process.env.NLS_MIN_TOP1 ?? 0);
    failed = (process.env.NLS_REQUIRE_IDENTICAL === "1" && !r.identical) || !(r.meanKL <= maxMeanKL) ||
             r.top1Agreement < minTop1;
} else {
    console.error("usage: node llama_state.mjs save MODEL STATE REF | check MODEL REF STATE... | compare MODEL A B | " +
                  "lossy MODEL ORIGINAL RESTORED");
    failed = true;
}
await model.dispose();
await llama.dispose();
process.exitCode = failed ? 1 : 0;
