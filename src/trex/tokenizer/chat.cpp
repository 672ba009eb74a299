#include "trex/tokenizer/chat.hpp"

#include "trex/base/error.hpp"

namespace trex::tok {

using json = nlohmann::json;

std::vector<chat_message> parse_chat_messages(const json& j, const std::string& where) {
    const json* list = &j;
    if (j.is_object()) {
        TREX_CHECK(j.contains("messages"), "{}: expected an array of messages or an object with \"messages\"", where);
        list = &j["messages"];
    }
    TREX_CHECK(list->is_array(), "{}: messages: expected an array", where);
    std::vector<chat_message> out;
    for (size_t i = 0; i < list->size(); i++) {
        const json& m = (*list)[i];
        const std::string p = fmt::format("{}: messages[{}]", where, i);
        TREX_CHECK(m.is_object(), "{}: expected an object", p);
        TREX_CHECK(m.contains("role") && m["role"].is_string(), "{}: missing string field 'role'", p);
        chat_message c;
        c.role = m["role"].get<std::string>();
        TREX_CHECK(c.role == "system" || c.role == "user" || c.role == "assistant",
                   "{}.role: '{}' is not supported (system, user, assistant)", p, c.role);
        for (const char* k :
             {"tools", "tool_calls", "response_format", "task", "wo_eos", "content_blocks", "tool_call_id"})
            TREX_CHECK(!m.contains(k) || m[k].is_null(), "{}.{}: not supported by trex's DeepSeek-V4 chat encoder", p,
                       k);
        if (m.contains("content") && !m["content"].is_null()) {
            TREX_CHECK(m["content"].is_string(), "{}.content: expected a string", p);
            c.content = m["content"].get<std::string>();
        }
        if (m.contains("reasoning_content") && !m["reasoning_content"].is_null()) {
            TREX_CHECK(m["reasoning_content"].is_string(), "{}.reasoning_content: expected a string", p);
            TREX_CHECK(c.role == "assistant", "{}.reasoning_content: only assistant messages have reasoning", p);
            c.reasoning_content = m["reasoning_content"].get<std::string>();
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::string render_dsv4_chat(const std::vector<chat_message>& msgs, const chat_options& opt,
                             std::vector<std::pair<size_t, size_t>>* trained) {
    std::string s = opt.add_bos ? dsv4::bos : "";
    const long n = (long)msgs.size();
    long last_user = -1;
    for (long i = n - 1; i >= 0; i--)
        if (msgs[i].role == "user") {
            last_user = i;
            break;
        }
    long last_assistant = -1;
    for (long i = n - 1; i >= 0; i--)
        if (msgs[i].role == "assistant") {
            last_assistant = i;
            break;
        }
    if (trained) trained->clear();
    for (long i = 0; i < n; i++) {
        const chat_message& m = msgs[i];
        if (m.role == "system") {
            s += m.content;
        } else if (m.role == "user") {
            s += dsv4::user;
            s += m.content;
        } else {  // assistant: [reasoning </think>] content EOS
            const size_t start = s.size();
            if (opt.thinking && (!opt.drop_thinking || i > last_user)) {
                s += m.reasoning_content.value_or("");
                s += dsv4::think_end;
            }
            s += m.content;
            s += dsv4::eos;
            if (trained && (!opt.train_last_only || i == last_assistant)) trained->push_back({start, s.size()});
        }
        // Transition: after a user message followed by an assistant one (or last), open the assistant turn.
        if (i + 1 < n && msgs[i + 1].role != "assistant") continue;
        if (m.role == "user") {
            s += dsv4::assistant;
            s += opt.thinking && (!opt.drop_thinking || i >= last_user) ? dsv4::think_start : dsv4::think_end;
        }
    }
    return s;
}

chat_encoding encode_dsv4_chat(const tokenizer& t, const std::vector<chat_message>& msgs, const chat_options& opt) {
    for (const char* tok : {dsv4::bos, dsv4::eos, dsv4::user, dsv4::assistant, dsv4::think_start, dsv4::think_end})
        TREX_CHECK(t.token_to_id(tok) >= 0, "{}: the DeepSeek-V4 chat format needs the token '{}'", t.name(), tok);
    chat_encoding e;
    e.text = render_dsv4_chat(msgs, opt, &e.trained);
    std::vector<uint32_t> starts;
    t.encode(e.text, e.ids, false, &starts);
    e.mask.assign(e.ids.size(), 0);
    size_t r = 0;
    for (size_t i = 0; i < e.ids.size(); i++) {
        while (r < e.trained.size() && starts[i] >= e.trained[r].second) r++;
        e.mask[i] = r < e.trained.size() && starts[i] >= e.trained[r].first;
    }
    return e;
}

}  // namespace trex::tok
