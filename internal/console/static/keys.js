// Keyboard shortcuts of the triage console (no inline script: the
// Content-Security-Policy forbids it). Queue: j/k move, o or Enter open,
// / search. Conversation: a approve and go to the next, e edit the draft,
// r reject, t take over. Everywhere: ? help, Escape leaves a field.
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("table.queue tbody tr[data-ref]")); }
  function current() { return document.querySelector("table.queue tbody tr.current"); }
  function move(by) {
    var rs = rows();
    if (!rs.length) return;
    var i = rs.indexOf(current());
    var next = i < 0 ? 0 : Math.min(Math.max(i + by, 0), rs.length - 1);
    if (i >= 0) rs[i].classList.remove("current");
    rs[next].classList.add("current");
    rs[next].scrollIntoView({block: "nearest"});
  }
  function click(sel) {
    var el = document.querySelector(sel);
    if (el && !el.disabled) { el.click(); return true; }
    return false;
  }
  function help() {
    var k = document.getElementById("keys");
    if (k) k.hidden = !k.hidden;
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (typing(ev.target)) {
      if (ev.key === "Escape") ev.target.blur();
      return;
    }
    var done = true;
    switch (ev.key) {
    case "j": move(1); break;
    case "k": move(-1); break;
    case "o":
    case "Enter": {
      var r = current();
      if (r) window.location.href = "/conversation/" + r.getAttribute("data-ref");
      else done = false;
      break;
    }
    case "/": {
      var q = document.getElementById("q");
      if (q) q.focus(); else window.location.href = "/queue";
      break;
    }
    case "a": {
      var next = document.querySelector("form#draft input[name=next]");
      if (next) next.value = "1";
      done = click("#approve");
      break;
    }
    case "e": {
      var t = document.getElementById("draft-body") || document.querySelector("form.compose textarea");
      if (t) { t.focus(); t.setSelectionRange(t.value.length, t.value.length); } else done = false;
      break;
    }
    case "r": {
      var box = document.querySelector("details.reject-box");
      if (box) { box.open = true; box.querySelector("select").focus(); } else done = false;
      break;
    }
    case "t": done = click("#takeover"); break;
    case "?": help(); break;
    case "Escape": { var k = document.getElementById("keys"); if (k) k.hidden = true; break; }
    default: done = false;
    }
    if (done) ev.preventDefault();
  });
})();
