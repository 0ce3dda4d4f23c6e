"""What the parts of the static-security checker share: the state `analyzer._Checker` holds and
the one way they report a finding."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from restbench.grading.security.findings import Kind
from restbench.grading.security.paths import PathJudge
from restbench.grading.security.urls import UrlJudge
from restbench.grading.security.values import Resolver

if TYPE_CHECKING:
    from restbench.grading.security.index import ModuleIndex


class CheckerState:
    index: ModuleIndex
    resolver: Resolver
    urls: UrlJudge
    paths: PathJudge
    base_url: str

    def flag(self, node: ast.AST, kind: Kind, message: str) -> None:
        raise NotImplementedError
