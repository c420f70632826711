// Package scaffold writes new things into an author source: the
// directories of a new source, and a new package with its members, each
// file of which validates as written.
//
// What it writes goes in through a Tree: every file is first written and
// synced into a staging directory inside the source, where it can be
// validated, and then each new item (a package directory, a skill
// directory, an agent file) is renamed into place whole, without replacing
// anything that exists. A source is never left with half a file, and an
// existing file is never overwritten.
//
// Scaffolding knows no rule of its own: paths come from the layout the
// rules state (#SourceLayout) and the comments of a new manifest from the
// rules' tables. 'dalo import claude-plugin' writes through the same Tree.
package scaffold
