package glancekrm

// Every stage and check of the function returns what it finds as values
// (findings.Finding: a rule id, the object, the field path, the level and
// the message); Process and Validate hand them to findings.Results, the
// one writer of KRM results, which also gives messages their form, tags
// and order and removes URL userinfo (report, process.go). validate's
// SARIF and GitHub annotations read those results back
// (findings.FromResult).
