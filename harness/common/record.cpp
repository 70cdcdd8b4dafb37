#include "common/record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

TimeStats summarize(std::vector<float> t) {
    TimeStats s;
    if (t.empty()) return s;
    std::sort(t.begin(), t.end());
    size_t n = t.size();
    s.median_ms = n % 2 ? t[n / 2] : 0.5 * (double(t[n / 2 - 1]) + t[n / 2]);
    s.min_ms = t.front();
    s.max_ms = t.back();
    s.reps = int(n);
    return s;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}
std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\', out += ch;
        else if (ch == '\n') out += "\\n";
        else if (static_cast<unsigned char>(ch) < 0x20) out += fmt("\\u%04x", ch);
        else out += ch;
    }
    return out + "\"";
}
std::string json_number(double v) { return std::isfinite(v) ? fmt("%.6g", v) : "null"; }
std::string json_stats(const TimeStats& t) {
    return "{\"median\": " + json_number(t.median_ms) + ", \"min\": " + json_number(t.min_ms) +
           ", \"max\": " + json_number(t.max_ms) + ", \"reps\": " + std::to_string(t.reps) + "}";
}

std::string json_resources(const Resources& r) {
    return "{\"threads_per_block\": " + std::to_string(r.threads_per_block) +
           ", \"shared_bytes\": " + std::to_string(r.shared_bytes) + ", \"registers\": " + std::to_string(r.registers) +
           ", \"blocks_per_sm\": " + std::to_string(r.blocks_per_sm) + ", \"occupancy\": " + json_number(r.occupancy) + "}";
}
