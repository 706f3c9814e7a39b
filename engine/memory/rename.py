"""Renaming a memory file: where what the user typed puts it (worked out first, for a confirmation to show),
and the move, never over an existing file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.config import Config
from engine.errors import MemdeckError, PathRefused
from engine.memory.names import topic_rel
from engine.workspace import ROOT_MEMORY_FILES, resolve_memory_path


@dataclass(frozen=True)
class RenamePlan:
    """What a rename will do, worked out before it is asked for, so a confirmation can show it exactly.

    Attributes:
        rel: the file now.
        new_rel: the file it becomes (``.md`` added, the name cleaned: see ``rules``).
        rules: each rule that changed what was typed, in words (``.md added: memory files end in .md``).
    """

    rel: str
    new_rel: str
    rules: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """Where the new name is: ``root`` (the workspace root), else its folder (``memory/``, ``memory/x/``)."""
        if "/" not in self.new_rel:
            return "root"
        return self.new_rel.rsplit("/", 1)[0] + "/"


def plan_rename(config: Config, rel: str, new_name: str) -> RenamePlan:
    """Work out where a rename of ``rel`` to what the user typed goes, refusing what would surprise them.

    - ``MEMORY.md`` / ``memory.md``: the root file of that name.
    - A ``memory/…`` path: exactly there (each part cleaned as :func:`topic_rel` does).
    - A plain name renames within the file's own folder: a root file stays at the root — where only
      ``MEMORY.md`` and ``memory.md`` are memory, so anything else is refused with how to move it into
      ``memory/`` —, ``memory/projects/a.md`` + ``b`` is ``memory/projects/b.md``.
    - A name with ``/`` for a file in ``memory/`` is a path under ``memory/``; an absolute path is taken as it is
      (an extra path's file), if it is a memory file.
    - A name without ``.md`` gets it; the rules applied are listed in :attr:`RenamePlan.rules`.

    Raises:
        PathRefused: the name leaves nothing usable, or the result would not be a memory file.
        MemdeckError: the new name is taken.
    """
    rel, path = resolve_memory_path(config, rel)
    typed = new_name.strip().replace("\\", "/")
    if not typed:
        raise PathRefused("a new name is needed")
    rules: list[str] = []
    if not typed.endswith(".md"):
        rules.append(".md added: memory files end in .md")
    root_name = typed if typed.endswith(".md") else typed + ".md"
    if root_name in ROOT_MEMORY_FILES:
        wanted = root_name
    elif typed.startswith("memory/"):
        wanted = topic_rel(typed)
    elif Path(typed).is_absolute():  # an exact path (an extra path's file); resolve_memory_path decides
        wanted = typed if typed.endswith(".md") else typed + ".md"
    elif Path(rel).is_absolute():  # an extra path: a plain name stays in its folder
        if "/" in typed:
            raise PathRefused(f"type a plain name to rename {rel} in its folder, or a memory/… path")
        wanted = str(path.with_name(topic_rel(typed).removeprefix("memory/")))
    elif "/" not in rel:
        shown = root_name
        raise PathRefused(f"{shown} cannot be a memory file at the workspace root (only "
                          f"{' and '.join(ROOT_MEMORY_FILES)} are); type memory/{typed.removeprefix('/')} "
                          "to move it into memory/")
    else:
        folder = rel.removeprefix("memory/").rpartition("/")[0]
        wanted = topic_rel(typed if "/" in typed or not folder else f"{folder}/{typed}")
    new_rel, target = resolve_memory_path(config, wanted)
    typed_stem = Path(root_name).name.removesuffix(".md")
    if Path(new_rel).name.removesuffix(".md") != typed_stem:
        rules.append("name cleaned: lower-case letters, digits, - _ and . only")
    old_folder, new_folder = rel.rpartition("/")[0], new_rel.rpartition("/")[0]
    if old_folder != new_folder:
        rules.append(f"moves from {old_folder + '/' if old_folder else 'the workspace root'} to "
                     f"{new_folder + '/' if new_folder else 'the workspace root'}")
    if new_rel != rel and (os.path.lexists(target)):
        raise MemdeckError(f"{new_rel} already exists")
    return RenamePlan(rel, new_rel, tuple(rules))


def rename_note(config: Config, rel: str, new_name: str) -> str:
    """Rename a memory file as :func:`plan_rename` says (never over an existing one); returns the new rel.

    Raises:
        MemdeckError: the new name is taken.
        PathRefused: either path is refused.
        OSError: the rename failed (the file keeps its old name).
    """
    plan = plan_rename(config, rel, new_name)
    path = resolve_memory_path(config, plan.rel)[1]
    new_rel, target = resolve_memory_path(config, plan.new_rel)
    if new_rel == plan.rel:
        return new_rel
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(path, target)  # fails if the target appeared meanwhile: never overwrite
    except FileExistsError:
        raise MemdeckError(f"{new_rel} already exists") from None
    os.unlink(path)
    return new_rel
