#!/bin/sh
# How far each resource kind is spread over src/: for each kind, the files
# that name its types or address kind, outside the kind's own folder
# (src/kinds/<kind>/ and src/sandbox/kinds/<kind>/, once it has one).
# The goal of "Kinds as modules" is at most 3 such files per kind (the
# registry, the manifest document enum, the sandbox router).
#
# A kind's pattern names its sandbox side too: its records there
# (`StageRecord`, `CodeValidationRecord`, `PromptTemplateRecord`,
# `PromptVersionRecord`), its module path (`sandbox::kinds::KIND`) and its
# lines in the sandbox's kinds registry (src/sandbox/kinds/mod.rs:
# `mod KIND;`, `KIND::routes`; `mod scorers;` and `mod projects;` are not
# matched, as the core has modules of those names, so for them the
# registry's `KIND::routes` line counts). Not counted: the sandbox's
# `ScorerRecord` (the scorer catalog, presets and custom scorers, which
# metric settings use) and `ProjectRecord`/`LogStreamRecord` (what every
# collection hangs off): they are the sandbox's core data, not a kind's.
#
#   sh scripts/kind-spread.sh            # counts per kind
#   sh scripts/kind-spread.sh -v         # and the files
set -eu
cd "$(dirname "$0")/.."

verbose=${1:-}

spread() {
  kind=$1
  pattern=$2
  files=$(grep -rlE "$pattern" src \
    | grep -v "^src/kinds/$kind/" \
    | grep -v "^src/sandbox/kinds/$kind/" \
    | sort || true)
  count=$(printf '%s' "$files" | grep -c . || true)
  printf '%-18s %3s files\n' "$kind" "$count"
  if [ "$verbose" = "-v" ] && [ -n "$files" ]; then
    printf '%s\n' "$files" | sed 's/^/    /'
  fi
}

spread templates '\bTemplate(Spec|State|Kind|Constraints|Address|Body|Op|Record|Create|Update)\b|(Annotation|Feedback)(Template|Constraints|TreeNode)\b|ConstraintKind|(Address|Operation)::Template\b|kinds::templates\b'
spread prompt_templates 'PromptTemplate(Spec|State|Address|Op|Record)|PromptVersionRecord|(Address|Kind|Operation)::Prompt(Template|Version)|(Spec|Body|Content|Document)::PromptTemplates?\b|prompt_templates::|\bmod prompt_templates;'
spread scorers 'CustomScorer(Spec|State|Address|Op)|(Address|Operation|AddressKind)::CustomScorer\b|(Document|Kind)::Scorer\b|kinds::scorers\b|CodeValidationRecord|\bscorers::(routes|code|versions|multipart)\b'
spread metric_settings 'MetricSettings'
spread integrations 'IntegrationSpec|IntegrationState|IntegrationAddress|CustomIntegration|Address::Integration'
spread dashboards 'Dashboard(Spec|State|Address)|Address::Dashboard'
spread sections 'Section(Spec|State|Address)|Address::Section'
spread widgets 'Widget(Spec|State|Address)|Address::Widget'
spread favorites 'Favorite(State|Spec|Address)|Address::Favorite'
spread protect_stages 'ProtectStage(Spec|State|Address|Op)|(Address|Kind|Operation|AddressKind)::ProtectStage\b|protect_stages::|\bStageRecord\b|\bmod protect_stages;'
spread projects 'ProjectAddress|LogStreamAddress|ProjectOp|(Address|Operation|AddressKind)::(Project|LogStream)\b|kinds::projects\b|\bprojects::routes\b'
