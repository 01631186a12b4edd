// The line editor of `parity explain --tui`: on a terminal, GNU readline
// (history kept in ~/.parity_history, arrow keys, Tab completing commands and
// value names) and answers longer than the screen through a pager ($PAGER,
// default `less -FRX`); otherwise plain lines from the stream, so scripts and
// tests can pipe commands in.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace parity::cli {

class LineEditor {
 public:
  LineEditor(bool tty, std::vector<std::string> words);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // The next line; false at the end of input.
  bool read(std::istream& is, std::ostream& os, std::string& line);
  // Writes an answer, paged on a terminal when it is taller than the screen.
  void show(const std::string& text, std::ostream& os) const;

 private:
  bool tty_;
  std::vector<std::string> words_;
};

}  // namespace parity::cli
