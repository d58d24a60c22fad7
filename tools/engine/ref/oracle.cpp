// The outside oracle of kiln-engine (issue 16): llama.cpp evaluates prompts teacher-forced and
// writes, for every position, the top-1 id and the top-8 (id, logit) pairs as JSON; or, with
// --generate N, prints llama.cpp's greedy continuation of one prompt (ids and text).
//
// Build (CPU, against a llama.cpp build tree; scripts/engine-oracle.sh does it all):
//   g++ -O2 -std=c++17 oracle.cpp -I$LLAMA/include -I$LLAMA/ggml/include \
//       -L$LLAMA/build/bin -lllama -lggml -lggml-base -Wl,-rpath,$LLAMA/build/bin -o oracle
// Run:
//   oracle MODEL.gguf PROMPTS.txt [--ctx-type q8_0|f16] > fixture.json
//   oracle MODEL.gguf PROMPTS.txt --generate 128 [--prompt-index I]
// PROMPTS.txt: prompts separated by lines holding only "%%%" (the newline before a separator
// is not part of the prompt). Tokenized by llama.cpp with add_special and parse_special (as
// llama-tokenize does by default). The KV cache is Q8_0 with flash attention by default, the
// cache kiln's engine keeps (`--ctx-type f16` gives llama.cpp's default cache instead).
#include "llama.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void quiet(ggml_log_level level, const char * text, void *) {
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static std::vector<std::string> read_prompts(const char * path) {
    std::ifstream f(path);
    if (!f) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    std::vector<std::string> out;
    std::string line, cur;
    bool any = false;
    while (std::getline(f, line)) {
        if (line == "%%%") { out.push_back(cur); cur.clear(); any = false; continue; }
        if (any) cur += "\n";
        cur += line;
        any = true;
    }
    if (any) out.push_back(cur);
    return out;
}

static void json_string(const std::string & s) {
    putchar('"');
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { putchar('\\'); putchar(c); }
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char ** argv) {
    if (argc < 3) { fprintf(stderr, "usage: oracle MODEL PROMPTS [--ctx-type q8_0|f16] [--generate N [--prompt-index I]]\n"); return 2; }
    const char * model_path = argv[1];
    int generate = 0, prompt_index = 0;
    bool f16_cache = false;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--generate") && i + 1 < argc) generate = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--prompt-index") && i + 1 < argc) prompt_index = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ctx-type") && i + 1 < argc) f16_cache = !strcmp(argv[++i], "f16");
        else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
    }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 999;
    llama_model * model = llama_model_load_from_file(model_path, mp);
    if (!model) { fprintf(stderr, "cannot load %s\n", model_path); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);
    auto prompts = read_prompts(argv[2]);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 2048;
    cp.n_batch = 2048;
    cp.n_ubatch = 512;
    cp.n_threads = cp.n_threads_batch = 2;
    if (!f16_cache) {
        cp.type_k = GGML_TYPE_Q8_0;
        cp.type_v = GGML_TYPE_Q8_0;
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    }
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "cannot create a context\n"); return 1; }

    auto tokenize = [&](const std::string & s) {
        std::vector<llama_token> t(s.size() + 8);
        int n = llama_tokenize(vocab, s.data(), (int) s.size(), t.data(), (int) t.size(), true, true);
        if (n < 0) { fprintf(stderr, "tokenize failed\n"); exit(1); }
        t.resize(n);
        return t;
    };
    auto decode = [&](const std::vector<llama_token> & toks, int pos0, bool all_logits) {
        llama_batch b = llama_batch_init((int) toks.size(), 0, 1);
        for (size_t i = 0; i < toks.size(); i++) {
            b.token[i] = toks[i];
            b.pos[i] = pos0 + (int) i;
            b.n_seq_id[i] = 1;
            b.seq_id[i][0] = 0;
            b.logits[i] = all_logits || i + 1 == toks.size();
        }
        b.n_tokens = (int) toks.size();
        if (llama_decode(ctx, b) != 0) { fprintf(stderr, "decode failed\n"); exit(1); }
        llama_batch_free(b);
    };
    auto argmax = [&](const float * l) {
        int best = 0;
        for (int v = 1; v < n_vocab; v++) if (l[v] > l[best]) best = v;
        return best;
    };

    if (generate > 0) {
        auto toks = tokenize(prompts.at(prompt_index));
        llama_memory_clear(llama_get_memory(ctx), true);
        decode(toks, 0, false);
        std::vector<int> out;
        std::string text;
        int pos = (int) toks.size();
        for (int i = 0; i < generate; i++) {
            int next = argmax(llama_get_logits_ith(ctx, -1));
            out.push_back(next);
            if (llama_vocab_is_eog(vocab, next)) break;
            char buf[256];
            int n = llama_token_to_piece(vocab, next, buf, sizeof buf, 0, true);
            if (n > 0) text.append(buf, n);
            decode({next}, pos++, false);
        }
        printf("{\"prompt_ids\": [");
        for (size_t i = 0; i < toks.size(); i++) printf("%s%d", i ? ", " : "", toks[i]);
        printf("], \"ids\": [");
        for (size_t i = 0; i < out.size(); i++) printf("%s%d", i ? ", " : "", out[i]);
        printf("], \"text\": ");
        json_string(text);
        printf("}\n");
        return 0;
    }

    printf("{\n\"model\": ");
    json_string(std::string(model_path).substr(std::string(model_path).find_last_of('/') + 1));
    printf(",\n\"kv_cache\": \"%s\",\n\"prompts\": [\n", f16_cache ? "f16" : "q8_0, flash attention");
    for (size_t p = 0; p < prompts.size(); p++) {
        auto toks = tokenize(prompts[p]);
        llama_memory_clear(llama_get_memory(ctx), true);
        decode(toks, 0, true);
        printf("{\"text\": ");
        json_string(prompts[p]);
        printf(",\n \"ids\": [");
        for (size_t i = 0; i < toks.size(); i++) printf("%s%d", i ? ", " : "", toks[i]);
        printf("],\n \"top1\": [");
        std::vector<std::vector<std::pair<int, float>>> tops;
        for (size_t i = 0; i < toks.size(); i++) {
            const float * l = llama_get_logits_ith(ctx, (int) i);
            std::vector<int> idx(n_vocab);
            for (int v = 0; v < n_vocab; v++) idx[v] = v;
            std::partial_sort(idx.begin(), idx.begin() + 8, idx.end(), [&](int a, int b) {
                return l[a] > l[b] || (l[a] == l[b] && a < b);
            });
            std::vector<std::pair<int, float>> t;
            for (int k = 0; k < 8; k++) t.push_back({idx[k], l[idx[k]]});
            tops.push_back(t);
            printf("%s%d", i ? ", " : "", idx[0]);
        }
        printf("],\n \"top8\": [");
        for (size_t i = 0; i < tops.size(); i++) {
            printf("%s[", i ? ",\n  " : "");
            for (int k = 0; k < 8; k++) printf("%s[%d, %.9g]", k ? ", " : "", tops[i][k].first, tops[i][k].second);
            printf("]");
        }
        printf("]}%s\n", p + 1 < prompts.size() ? "," : "");
    }
    printf("]\n}\n");
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
