"""Scripted samples of the question-shape helper `_count_same_attribute` on CLEVR dev questions 16-19,
shared by the shape route's tests and the paired-search benchmark's."""

from __future__ import annotations

NAME = "_count_same_attribute"
ATTRIBUTE_QUESTIONS = {"color": "What color is this object?", "shape": "What shape is this object?",
                       "material": "What material is this object made of?", "size": "What size is this object?"}
RIGHT = f'''```python
def {NAME}(image, attribute, description, reference):
    asked = {ATTRIBUTE_QUESTIONS!r}[attribute]
    value = vqa(image, asked, reference)
    return len([b for b in loc(image, description)
                if not same_object(image, b, reference) and vqa(image, asked, b) == value])
```'''
WRONG = f'''```python
def {NAME}(image, attribute, description, reference):
    return len(loc(image, description)) + len(attribute) + len(reference)
```'''
# dev questions 16 to 19 ask "How many other things are there of the same <attribute> as the <reference>?"
CALLS = {"16": ("size", "metallic sphere"), "17": ("color", "tiny rubber cube"), "18": ("material", "blue ball"),
         "19": ("shape", "blue matte thing")}


def program_writer(questions, calls_helper=True):
    """Programs that call the shape helper with the question's attribute and reference, when it is shown."""

    def program(messages):
        text = "\n".join(str(m["content"]) for m in messages)
        question = next(q for q in reversed(questions) if q.question in text)
        if calls_helper and f"def {NAME}(" in messages[0]["content"] and question.question_id in CALLS:
            attribute, reference = CALLS[question.question_id]
            return (f"```python\nreference = loc(image, {reference!r})[0]\n"
                    f"final_result = {NAME}(image, {attribute!r}, 'objects', reference)\n```")
        return "```python\nfinal_result = 5\n```"

    return program
