package message

import (
	"regexp"
	"strings"

	"github.com/inbucket/html2text"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText converts an HTML body to plain text after dropping everything
// a reader would not see: <head>, <style>, <script>, elements marked hidden
// and invisible preheaders. Blockquotes come out as ">" lines so quoted
// history is set apart like in plain-text mail.
func htmlToText(src string) (string, error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", err
	}
	dropHidden(doc)
	text, err := html2text.FromHTMLNode(doc, html2text.Options{OmitLinks: true})
	if err != nil {
		return "", err
	}
	// html2text opens each blockquote with an empty ">" line; drop those.
	return emptyQuote.ReplaceAllString(text, ""), nil
}

var emptyQuote = regexp.MustCompile(`(?m)^(?:> ?)+[ \t]*\n`)

// dropHidden removes invisible elements from the tree rooted at n.
func dropHidden(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.CommentNode || (c.Type == html.ElementNode && hidden(c)) {
			n.RemoveChild(c)
		} else {
			dropHidden(c)
		}
		c = next
	}
}

func hidden(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Head, atom.Style, atom.Script, atom.Template, atom.Noscript, atom.Title, atom.Meta, atom.Link:
		return true
	}
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		val := strings.ToLower(strings.TrimSpace(a.Val))
		switch key {
		case "hidden":
			return true
		case "aria-hidden":
			if val == "true" {
				return true
			}
		case "class":
			for _, c := range strings.Fields(val) {
				if c == "preheader" {
					return true
				}
			}
		case "style":
			if hiddenStyle(val) {
				return true
			}
		}
	}
	return false
}

// hiddenStyle reports whether an inline style hides the element.
func hiddenStyle(style string) bool {
	for _, decl := range strings.Split(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.TrimSpace(prop)
		val = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important"))
		switch {
		case prop == "display" && val == "none",
			prop == "visibility" && val == "hidden",
			prop == "mso-hide" && val == "all",
			prop == "opacity" && (val == "0" || val == "0.0"):
			return true
		}
	}
	return false
}
