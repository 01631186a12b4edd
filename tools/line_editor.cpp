#include "tools/line_editor.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <istream>
#include <ostream>

#ifdef PARITY_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

namespace parity::cli {

namespace {

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.parity_history" : "";
}

#ifdef PARITY_HAVE_READLINE
// readline's completion is a C callback: the words of the one editor alive.
const std::vector<std::string>* g_words = nullptr;

char* next_word(const char* text, int state) {
  static size_t at;
  if (state == 0) at = 0;
  const std::string prefix(text);
  while (g_words && at < g_words->size()) {
    const std::string& w = (*g_words)[at++];
    if (w.compare(0, prefix.size(), prefix) == 0) return strdup(w.c_str());
  }
  return nullptr;
}

char** complete(const char* text, int, int) {
  rl_attempted_completion_over = 1;  // no file names
  return rl_completion_matches(text, next_word);
}
#endif

}  // namespace

LineEditor::LineEditor(bool tty, std::vector<std::string> words) : tty_(tty), words_(std::move(words)) {
#ifdef PARITY_HAVE_READLINE
  if (tty_) {
    g_words = &words_;
    rl_attempted_completion_function = complete;
    // Value names hold dots; a word breaks at spaces only.
    rl_completer_word_break_characters = const_cast<char*>(" \t");
    if (auto h = history_path(); !h.empty()) read_history(h.c_str());
  }
#endif
}

LineEditor::~LineEditor() {
#ifdef PARITY_HAVE_READLINE
  if (tty_) {
    if (auto h = history_path(); !h.empty()) {
      write_history(h.c_str());
      history_truncate_file(h.c_str(), 1000);
    }
    g_words = nullptr;
  }
#endif
}

bool LineEditor::read(std::istream& is, std::ostream& os, std::string& line) {
#ifdef PARITY_HAVE_READLINE
  if (tty_) {
    os << std::flush;
    char* l = readline("parity> ");
    if (!l) return false;
    line = l;
    std::free(l);
    // Completion leaves a space after the word; history keeps the command.
    line.erase(line.find_last_not_of(" \t") + 1);
    if (!line.empty()) add_history(line.c_str());
    return true;
  }
#endif
  if (tty_) os << "parity> " << std::flush;
  return static_cast<bool>(std::getline(is, line));
}

void LineEditor::show(const std::string& text, std::ostream& os) const {
  if (tty_ && isatty(STDOUT_FILENO)) {
    winsize ws{};
    const long rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row ? ws.ws_row : 24;
    if (std::count(text.begin(), text.end(), '\n') >= rows - 1) {
      const char* pager = std::getenv("PAGER");
      os << std::flush;
      if (std::FILE* p = popen(pager && *pager ? pager : "less -FRX", "w")) {
        std::fwrite(text.data(), 1, text.size(), p);
        if (pclose(p) == 0) return;
      }
    }
  }
  os << text << std::flush;
}

}  // namespace parity::cli
